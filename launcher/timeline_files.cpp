// Writing the job's timeline files (whole files, each written once at the job's end or on request).
#include "timeline_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string_view>

#include <fmt/format.h>

#include "output/log_directory.h"
#include "timeline/timeline_page.h"

namespace ddplaunch {

namespace {
// "" when all of `text` went into fd (then closed), else the OS's reason.
std::string write_all_and_close(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
      ::close(fd);
      return why;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0 ? "" : std::strerror(errno);
}

// `fd` just opened for `shown` (-1: the open failed, errno says why): `text` written whole.
// "" or what failed, for the person.
std::string write_opened(int fd, const std::string& shown, const std::string& text) {
  if (fd < 0) return "cannot write " + shown + ": " + std::strerror(errno);
  if (std::string why = write_all_and_close(fd, text); !why.empty()) return "cannot write " + shown + ": " + why;
  return "";
}

std::string_view file_kind(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "a device";
}

// `text` as the whole of `path`, written without ever opening what is there: into a new file
// beside it (O_CREAT | O_EXCL | O_NOFOLLOW: a name nobody had), then renamed over `path`.
// rename() replaces a symlink itself and never follows it, so another user's link in a shared
// folder cannot aim the write at a victim file; a path that is not a regular file is refused
// (a FIFO there would have held an open for writing until a reader came: forever).
std::string write_file(const std::string& path, const std::string& text) {
  struct stat there {};
  const bool exists = ::lstat(path.c_str(), &there) == 0;
  if (!exists && errno != ENOENT) return "cannot write " + path + ": " + std::strerror(errno);
  if (exists && !S_ISREG(there.st_mode))
    return fmt::format("{} is {}, not a regular file: left as it is, nothing written there (remove it, or name "
                       "another file)",
                       path, file_kind(there.st_mode));
  std::random_device random;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string temporary = fmt::format("{}.tmp-{}-{:08x}", path, ::getpid(), random());
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;  // someone's file of that name: draw another
    if (fd >= 0 && exists && there.st_uid == ::geteuid()) ::fchmod(fd, there.st_mode & 07777);  // keep our own file's mode
    if (std::string error = write_opened(fd, temporary, text); !error.empty()) {
      if (fd >= 0) ::unlink(temporary.c_str());
      return error;
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      ::unlink(temporary.c_str());
      return "cannot write " + path + ": " + why;
    }
    return "";
  }
  return "cannot write " + path + ": every temporary name tried beside it was taken";
}
}  // namespace

std::string write_whole_file(const std::string& path, const std::string& text) { return write_file(path, text); }

TimelinePaths timeline_paths_for(const std::string& trace_file) {
  constexpr std::string_view kJson = ".json";
  std::string page = trace_file;
  if (page.size() > kJson.size() && page.compare(page.size() - kJson.size(), kJson.size(), kJson) == 0)
    page.resize(page.size() - kJson.size());
  return {trace_file, page + ".html"};
}

std::string write_timeline(const TimelinePaths& paths, const std::string& trace_json) {
  if (std::string error = write_file(paths.json, trace_json); !error.empty()) return error;
  return write_file(paths.page, timeline::timeline_page(trace_json));
}

std::string write_timeline_to_log_dir(const std::string& log_dir, const std::string& trace_json) {
  auto dir = LogDirectory::open_once(log_dir);
  if (!dir) return dir.error;
  for (const auto& [name, text] : {std::pair<std::string, std::string>{kLogDirTraceName, trace_json},
                                   {kLogDirPageName, timeline::timeline_page(trace_json)}}) {
    const LogDirectory& d = **dir.value;
    if (std::string error = write_opened(d.open_file(name, O_WRONLY | O_CREAT | O_TRUNC), d.shown(name), text);
        !error.empty())
      return error;
  }
  return "";
}

}  // namespace ddplaunch
