// Shim lookup: relative to the executable first (installed or carried prefix), then the
// build tree. See shim_paths.h.
#include "shim_paths.h"

#include <filesystem>
#include <system_error>

namespace ddplaunch {

namespace {

bool present(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace

ShimPaths locate_shims_from(const std::string& executable_dir) {
  const auto prefix = std::filesystem::path(executable_dir).parent_path();
  const auto preload = prefix / "lib" / "ddplaunch" / "libddplaunch_nccl_preload.so";
  const auto autoload = prefix / "share" / "ddplaunch" / "python" / "autoload";
  ShimPaths paths{DDPLAUNCH_PRELOAD_LIB, DDPLAUNCH_PYTHON_SHIM_DIR};
  if (!executable_dir.empty() && present(preload)) paths.preload_lib = preload.string();
  if (!executable_dir.empty() && present(autoload / "sitecustomize.py"))
    paths.python_autoload_dir = autoload.string();
  return paths;
}

ShimPaths locate_shims() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return locate_shims_from(ec ? std::string() : exe.parent_path().string());
}

}  // namespace ddplaunch
