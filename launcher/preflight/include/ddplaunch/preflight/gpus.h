// GPU discovery without a CUDA build dependency (dlopen of libcuda, else NVML), the
// CUDA_VISIBLE_DEVICES rules as a pure function, and the --nproc-per-node resolution.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ddplaunch/preflight/outcome.h"

namespace ddplaunch::preflight {

struct GpuInfo {
  int count = 0;               // GPUs this process may use (after CUDA_VISIBLE_DEVICES)
  std::string driver_version;  // NVML's "535.104.05" when NVML loads, else "" 
  std::string cuda_version;    // driver's CUDA API version, "12.2" (cuDriverGetVersion)
  std::string nccl_version;    // "2.18.5" when libnccl.so.2 loads, else ""
  std::string source = "none"; // "libcuda", "nvml" or "none"
  std::string note;            // why a source failed / how CUDA_VISIBLE_DEVICES was applied
  // PCI address of each visible GPU in CUDA order, sysfs form ("0000:3b:00.0"); from libcuda
  // only (it applies CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER as the workers will), else empty.
  std::vector<std::string> pci_bus_ids;
};

// cuDeviceGetPCIBusId's "00000000:3B:00.0" / "0000:3B:00.0" as sysfs names it: lower case,
// the domain cut to 4 digits when its extra digits are zeros.
std::string sysfs_pci_address(std::string_view cuda_bus_id);

// Tries libcuda.so.1 (cuInit, cuDeviceGetCount: the driver itself applies
// CUDA_VISIBLE_DEVICES), then libnvidia-ml.so.1 (nvmlDeviceGetCount_v2 counts every GPU, so
// visible_gpu_count is applied to it). Never fails: no driver gives count 0, source "none".
// Cost: cuInit takes tens to hundreds of ms on a GPU node; workers exec, so the CUDA state
// in the launcher does not leak into them.
GpuInfo detect_gpus();

// How many of `physical_count` devices CUDA exposes under CUDA_VISIBLE_DEVICES (nullopt =
// unset = all). Rules as in CUDA and torch.cuda._parse_visible_devices: a comma list parsed
// like strtoul ("1gpu" = 1, spaces trimmed) up to the first entry that is not a non-negative
// number; a repeated ordinal makes the set empty; the list is cut at the first ordinal
// >= physical_count. "" / "-1" / "NoDevFiles" give 0. GPU-/MIG- UUID lists count their
// entries (up to a repeat or a non-UUID entry), capped at physical_count.
int visible_gpu_count(std::optional<std::string_view> cuda_visible_devices, int physical_count);

// requested: a positive integer, or torchrun's words: "auto" (gpu_count if > 0, else
// cpu_count), "gpu" (gpu_count; an error without GPUs), "cpu" (cpu_count); or ddplaunch's
// default "gpu-or-1" (gpu_count if > 0, else 1). A number above gpu_count when
// gpu_count > 0 is an error naming both numbers and the fix.
Result<int> resolve_nproc(std::string_view requested, int gpu_count,
                          int cpu_count = static_cast<int>(std::thread::hardware_concurrency()));

}  // namespace ddplaunch::preflight
