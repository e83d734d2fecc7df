// PATH lookup (see program_path.h); Boost.Process's search_path rule without Boost.Process,
// which only the spawner includes.
#include "env/program_path.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace ddplaunch {

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::string_view dirs(path);
  while (true) {
    const std::size_t colon = dirs.find(':');
    std::filesystem::path candidate = std::filesystem::path(std::string(dirs.substr(0, colon))) / name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && !ec && ::access(candidate.c_str(), X_OK) == 0)
      return candidate.string();
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

}  // namespace ddplaunch
