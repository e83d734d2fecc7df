// GPU discovery through dlopen: NVML first for the count (no CUDA context, no driver threads),
// libcuda when PCI addresses are needed or NVML fails (it applies CUDA_VISIBLE_DEVICES
// itself); NCCL's version from nccl_version.cpp. No CUDA headers.
#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <string>

#include "ddplaunch/preflight/gpus.h"
#include "ddplaunch/base/name_table.h"
#include "nccl_version.h"

namespace ddplaunch::preflight {
namespace {

using CuInit = int (*)(unsigned);
using CuIntOut = int (*)(int*);
using CuErrorName = int (*)(int, const char**);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetPciBusId = int (*)(char*, int, int);
using NvmlVoid = int (*)();
using NvmlCount = int (*)(unsigned*);
using NvmlText = int (*)(char*, unsigned);
using NvmlIntOut = int (*)(int*);
using NvmlErrorString = const char* (*)(int);

template <typename Fn>
Fn symbol(void* lib, const char* name) {
  return reinterpret_cast<Fn>(::dlsym(lib, name));
}

std::string cuda_version_text(int v) {  // 12020 -> "12.2"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

void append_note(GpuInfo& info, const std::string& text) {
  if (!info.note.empty()) info.note += "; ";
  info.note += text;
}

std::string dl_error() {
  const char* e = ::dlerror();
  return e ? e : "unknown error";
}

// Returns true when libcuda answered (count may be 0). The library stays loaded: unloading
// a driver after cuInit is not supported.
bool query_libcuda(GpuInfo& info) {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    append_note(info, "libcuda.so.1 not loadable (" + dl_error() + ")");
    return false;
  }
  auto init = symbol<CuInit>(lib, "cuInit");
  auto count = symbol<CuIntOut>(lib, "cuDeviceGetCount");
  auto version = symbol<CuIntOut>(lib, "cuDriverGetVersion");
  auto error_name = symbol<CuErrorName>(lib, "cuGetErrorName");
  if (!init || !count) {
    append_note(info, "libcuda.so.1 lacks cuInit/cuDeviceGetCount");
    return false;
  }
  int v = 0;
  if (version && version(&v) == 0 && v > 0) info.cuda_version = cuda_version_text(v);
  int rc = init(0);
  if (rc == 100) {  // CUDA_ERROR_NO_DEVICE: driver present, nothing visible
    info.source = GpuSource::Libcuda;
    info.count = 0;
    append_note(info, "libcuda: no CUDA device visible (CUDA_ERROR_NO_DEVICE)");
    return true;
  }
  if (rc != 0) {
    const char* name = nullptr;
    if (error_name) error_name(rc, &name);
    append_note(info, "libcuda: cuInit failed with error " + std::to_string(rc) + (name ? std::string(" ") + name : ""));
    return false;
  }
  int n = 0;
  if (count(&n) != 0) {
    append_note(info, "libcuda: cuDeviceGetCount failed");
    return false;
  }
  info.source = GpuSource::Libcuda;
  info.count = n;
  auto device_get = symbol<CuDeviceGet>(lib, "cuDeviceGet");
  auto bus_id = symbol<CuDeviceGetPciBusId>(lib, "cuDeviceGetPCIBusId");
  for (int ordinal = 0; device_get && bus_id && ordinal < n; ++ordinal) {
    int device = 0;
    char text[32] = {};
    if (device_get(&device, ordinal) != 0 || bus_id(text, sizeof text, device) != 0) {
      info.pci_bus_ids.clear();  // all or none: placement needs every GPU's address
      break;
    }
    info.pci_bus_ids.push_back(sysfs_pci_address(text));
  }
  append_note(info, "libcuda: " + std::to_string(n) + " device(s), CUDA_VISIBLE_DEVICES applied by the driver");
  return true;
}

// Fills the driver version; when use_count, also the count (with CUDA_VISIBLE_DEVICES applied).
void query_nvml(GpuInfo& info, bool use_count) {
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    if (use_count) append_note(info, "libnvidia-ml.so.1 not loadable (" + dl_error() + ")");
    return;
  }
  auto init = symbol<NvmlVoid>(lib, "nvmlInit_v2");
  auto shutdown = symbol<NvmlVoid>(lib, "nvmlShutdown");
  auto count = symbol<NvmlCount>(lib, "nvmlDeviceGetCount_v2");
  auto driver = symbol<NvmlText>(lib, "nvmlSystemGetDriverVersion");
  auto cuda = symbol<NvmlIntOut>(lib, "nvmlSystemGetCudaDriverVersion_v2");
  auto error_string = symbol<NvmlErrorString>(lib, "nvmlErrorString");
  int rc = init ? init() : -1;
  if (rc != 0) {
    if (use_count) {
      append_note(info, "nvml: nvmlInit_v2 failed" +
                            (error_string && init ? std::string(": ") + error_string(rc) : std::string()));
    }
    ::dlclose(lib);
    return;
  }
  char text[96] = {};
  if (driver && driver(text, sizeof text) == 0) info.driver_version = text;
  int v = 0;
  if (info.cuda_version.empty() && cuda && cuda(&v) == 0 && v > 0) info.cuda_version = cuda_version_text(v);
  unsigned n = 0;
  if (use_count && count && count(&n) == 0) {
    const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
    info.count = visible_gpu_count(cvd ? std::optional<std::string_view>(cvd) : std::nullopt, static_cast<int>(n));
    info.source = GpuSource::Nvml;
    append_note(info, "nvml: " + std::to_string(n) + " device(s) installed, " + std::to_string(info.count) +
                          " visible" + (cvd ? std::string(" with CUDA_VISIBLE_DEVICES=") + cvd : std::string()));
  }
  if (shutdown) shutdown();
  ::dlclose(lib);
}

}  // namespace

std::string_view gpu_source_name(GpuSource source) {
  static constexpr NameTable<GpuSource, 4> kNames{{{
      {GpuSource::None, "none"},
      {GpuSource::Libcuda, "libcuda"},
      {GpuSource::Nvml, "nvml"},
      {GpuSource::NotProbed, "not probed"},
  }}};
  return kNames.name(source);
}

std::string sysfs_pci_address(std::string_view cuda_bus_id) {
  std::string out;
  for (char c : cuda_bus_id) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto colon = out.find(':');
  while (colon != std::string::npos && colon > 4 && out[0] == '0') out.erase(0, 1), --colon;
  return out;
}

GpuInfo detect_gpus(const GpuQuery& query) {
  GpuInfo info;
  if (!query.devices) {
    info.source = GpuSource::NotProbed;
    append_note(info, "GPUs not probed: " + (query.why_not_probed.empty() ? std::string("the job does not need them")
                                                                             : query.why_not_probed));
  } else if (query.pci_addresses) {
    bool from_cuda = query_libcuda(info);
    query_nvml(info, /*use_count=*/!from_cuda);
  } else {
    query_nvml(info, /*use_count=*/true);
    if (info.source == GpuSource::None) query_libcuda(info);
  }
  if (info.source == GpuSource::None) append_note(info, "no NVIDIA driver found: treating this node as CPU-only");
  std::string nccl_note;
  info.nccl_version = find_nccl_version(query.nccl, nccl_note);
  if (!nccl_note.empty()) append_note(info, nccl_note);
  return info;
}

}  // namespace ddplaunch::preflight
