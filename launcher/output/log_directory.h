// --log-dir, opened once. Every file the launcher writes there (rank logs, stacks files) is
// created relative to that one open directory, never through its path again: a directory
// swapped for a symlink after the start (by someone else with write access to its parent)
// cannot divert the files to wherever the link points.
#pragma once

#include <string>
#include <string_view>

#include "ddplaunch/base/result.h"

namespace ddplaunch {

class LogDirectory {
 public:
  // The directory at `path`, created when missing and opened at the first call for that path
  // (O_DIRECTORY | O_NOFOLLOW: a symlink there is refused, naming it); the same one after.
  static Result<const LogDirectory*> open_once(const std::string& path);

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // "PATH/name", for messages.
  std::string shown(std::string_view name) const { return path_ + "/" + std::string(name); }
  // openat(fd, name) with O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK added; -1 and errno as open(2).
  int open_file(const std::string& name, int flags, int mode = 0644) const;

 private:
  LogDirectory(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace ddplaunch
