// --log-dir opened once (log_directory.h).
#include "output/log_directory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace ddplaunch {

Result<const LogDirectory*> LogDirectory::open_once(const std::string& path) {
  static std::mutex mutex;
  static auto* opened = new std::map<std::string, std::unique_ptr<LogDirectory>>;  // lives to the end
  std::lock_guard lock(mutex);
  if (auto it = opened->find(path); it != opened->end()) return Result<const LogDirectory*>::success(it->second.get());
  auto refuse = [&](const std::string& why) { return Result<const LogDirectory*>::failure(why); };
  std::string link_path = path;  // "link/" would be followed
  while (link_path.size() > 1 && link_path.back() == '/') link_path.pop_back();
  std::error_code ec;
  std::filesystem::create_directories(link_path, ec);
  if (ec && !std::filesystem::is_symlink(link_path))
    return refuse(fmt::format("cannot create log directory '{}': {}", path, ec.message()));
  const int fd = ::open(link_path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) && std::filesystem::is_symlink(link_path))
    return refuse(fmt::format("refusing log directory '{}': it is a symbolic link (someone else may have planted it); "
                              "give --log-dir a real directory",
                              path));
  if (fd < 0) return refuse(fmt::format("cannot open log directory '{}': {}", path, std::strerror(errno)));
  auto& entry = (*opened)[path];
  entry.reset(new LogDirectory(link_path, fd));
  return Result<const LogDirectory*>::success(entry.get());
}

int LogDirectory::open_file(const std::string& name, int flags, int mode) const {
  return ::openat(fd_, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
}

}  // namespace ddplaunch
