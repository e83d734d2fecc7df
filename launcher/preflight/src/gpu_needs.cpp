// Whether a launch needs a GPU probe at all, and whether this machine has anything to find:
// decided from a directory listing and /proc/modules, before any driver library is loaded.
#include <dirent.h>

#include <string>

#include "ddplaunch/preflight/gpus.h"
#include "nccl_version.h"

namespace ddplaunch::preflight {

bool gpu_probe_needed(const GpuNeeds& needs) {
  if (!needs.driver_present) return false;  // no device, no module: a probe can only find nothing
  if (needs.report || needs.placement) return true;
  return !(needs.nproc_is_number && needs.single_node);  // the count would decide nothing
}

bool nccl_version_needed(const GpuNeeds& needs) {
  if (needs.report) return true;
  return needs.driver_present && !needs.single_node;  // CPU-only nodes run gloo: NCCL is moot
}

bool is_gpu_device_name(std::string_view name) {
  if (name == "dxg") return true;  // WSL 2: the GPU is reached through /dev/dxg, no nvidia module
  // nvidia0…, nvidiactl, nvidia-uvm; not nvidia-caps alone (a directory of MIG capabilities).
  return name.rfind("nvidia", 0) == 0 && name != "nvidia-caps";
}

bool lists_nvidia_module(std::string_view text) {
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    for (std::string_view module : {"nvidia ", "nvgpu "})  // desktop / data-centre, Jetson
      if (line.rfind(module, 0) == 0) return true;
    start = end + 1;
  }
  return false;
}

bool nvidia_driver_present() {
  if (DIR* dev = ::opendir("/dev")) {
    bool found = false;
    while (dirent* entry = ::readdir(dev))
      if ((found = is_gpu_device_name(entry->d_name))) break;
    ::closedir(dev);
    if (found) return true;
  }
  return lists_nvidia_module(read_small_file("/proc/modules", 1u << 20));  // absent in some containers: ""
}

}  // namespace ddplaunch::preflight
