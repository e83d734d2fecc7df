// GPU discovery without a CUDA build dependency (dlopen of NVML, else libcuda), only when the
// job needs it; NCCL's version without loading libnccl; the CUDA_VISIBLE_DEVICES rules as a
// pure function, and the --nproc-per-node resolution.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ddplaunch/preflight/outcome.h"

namespace ddplaunch::preflight {

// Where a node's GPU count came from.
enum class GpuSource {
  None,       // no NVIDIA driver answered: a CPU-only node
  Libcuda,    // the CUDA driver API (applies CUDA_VISIBLE_DEVICES itself)
  Nvml,       // NVML (CUDA_VISIBLE_DEVICES applied by ddplaunch)
  NotProbed,  // not asked (GpuQuery::devices false): the job did not need the count
};
std::string_view gpu_source_name(GpuSource source);  // "none", "libcuda", "nvml", "not probed"

struct GpuInfo {
  int count = 0;               // GPUs this process may use (after CUDA_VISIBLE_DEVICES)
  std::string driver_version;  // NVML's "535.104.05" when NVML loads, else "" 
  std::string cuda_version;    // driver's CUDA API version, "12.2" (cuDriverGetVersion)
  std::string nccl_version;    // "2.18.5" (from the library's name, nccl.h or ncclGetVersion), else ""
  GpuSource source = GpuSource::None;
  std::string note;            // why a source failed / how CUDA_VISIBLE_DEVICES was applied
  // PCI address of each visible GPU in CUDA order, sysfs form ("0000:3b:00.0"); from libcuda
  // only (it applies CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER as the workers will), else empty.
  std::vector<std::string> pci_bus_ids;
};

// cuDeviceGetPCIBusId's "00000000:3B:00.0" / "0000:3B:00.0" as sysfs names it: lower case,
// the domain cut to 4 digits when its extra digits are zeros.
std::string sysfs_pci_address(std::string_view cuda_bus_id);

// What a launch needs to know about GPUs, decided before anything is loaded (a
// launcher starts for every job, test and restart; its own cost must stay at the floor).
struct GpuNeeds {
  bool driver_present = true;    // nvidia_driver_present(): without it there is nothing to find
  bool nproc_is_number = false;  // --nproc-per-node N: the count decides nothing on one node
  bool single_node = true;       // standalone, or one node and no spare: no node facts compared
  bool placement = false;        // --numa-binding: needs every GPU's PCI address (libcuda)
  bool report = false;           // doctor / --dry-run: show the facts even when nothing needs them
};
bool gpu_probe_needed(const GpuNeeds& needs);
// NCCL's version is a node fact compared across nodes (and shown by doctor / --dry-run).
bool nccl_version_needed(const GpuNeeds& needs);

// /dev holds an NVIDIA device (nvidia0, nvidiactl, or WSL's dxg), or /proc/modules lists an
// nvidia / nvgpu module. Reads one directory and one small file; loads nothing.
bool nvidia_driver_present();
bool is_gpu_device_name(std::string_view dev_entry);         // "nvidia0", "nvidiactl", "dxg"
bool lists_nvidia_module(std::string_view proc_modules_text);  // a line "nvidia ..." / "nvgpu ..."

// "libnccl.so.2.18.5" → "2.18.5"; "" when the name carries no full version ("libnccl.so.2").
std::string nccl_version_from_file_name(std::string_view file_name);
// nccl.h's NCCL_MAJOR / NCCL_MINOR / NCCL_PATCH defines → "2.28.9"; "" when one is missing.
std::string nccl_version_from_header(std::string_view text);
// Where the dynamic linker would find `soname`: the directories of `ld_library_path`, then
// the paths /etc/ld.so.cache lists (`ld_cache`: that file's bytes). "" when neither has it.
std::string locate_library(std::string_view soname, std::string_view ld_library_path, std::string_view ld_cache);

enum class NcclLookup {
  Skip,           // not needed: nccl_version stays ""
  Files,          // the library's (resolved) file name, else nccl.h beside it; never loads it
  FilesThenLoad,  // and when both fail, dlopen libnccl.so.2 for ncclGetVersion (hundreds of MiB)
};

struct GpuQuery {
  bool devices = true;         // count GPUs (gpu_probe_needed)
  std::string why_not_probed;  // with devices false: the note to show (doctor, --dry-run)
  bool pci_addresses = false;  // placement: libcuda first, it applies CUDA's device order
  NcclLookup nccl = NcclLookup::Files;
};

// Counts GPUs with NVML first (nvmlInit_v2 + nvmlDeviceGetCount_v2: no CUDA context, no
// driver threads; visible_gpu_count applies CUDA_VISIBLE_DEVICES), then libcuda (cuInit,
// cuDeviceGetCount: the driver applies CUDA_VISIBLE_DEVICES itself); with pci_addresses,
// libcuda first. Never fails: no driver gives count 0, source "none". Workers exec, so no
// driver state in the launcher leaks into them.
GpuInfo detect_gpus(const GpuQuery& query = {});

// How many of `physical_count` devices CUDA exposes under CUDA_VISIBLE_DEVICES (nullopt =
// unset = all). Rules as in CUDA and torch.cuda._parse_visible_devices: a comma list parsed
// like strtoul ("1gpu" = 1, spaces trimmed) up to the first entry that is not a non-negative
// number; a repeated ordinal makes the set empty; the list is cut at the first ordinal
// >= physical_count. "" / "-1" / "NoDevFiles" give 0. GPU-/MIG- UUID lists count their
// entries (up to a repeat or a non-UUID entry), capped at physical_count.
int visible_gpu_count(std::optional<std::string_view> cuda_visible_devices, int physical_count);

}  // namespace ddplaunch::preflight
