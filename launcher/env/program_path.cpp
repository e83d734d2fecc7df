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

std::string program_start_problem(const std::string& name) {
  if (name.empty()) return "no program to run was given (ddplaunch [OPTIONS] -- PROGRAM [ARGS])";
  if (name.find('/') == std::string::npos) {
    if (!find_program(name).empty()) return "";
    const char* path = std::getenv("PATH");
    return "the program '" + name + "' was not found on this node's PATH (" + (path ? path : "PATH is unset") +
           "): install it there, or give its path";
  }
  std::error_code ec;
  const auto status = std::filesystem::status(name, ec);
  if (ec || !std::filesystem::exists(status))
    return "the program '" + name + "' does not exist on this node: check the path (relative paths start from " +
           std::filesystem::current_path(ec).string() + ")";
  if (!std::filesystem::is_regular_file(status)) return "the program '" + name + "' is not a file";
  if (::access(name.c_str(), X_OK) != 0)
    return "the program '" + name + "' is not executable: chmod +x it, or run it through its interpreter";
  return "";
}

}  // namespace ddplaunch
