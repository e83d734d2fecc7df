// read_proc_file: see proc_file.h.
#include "supervise/proc_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace ddplaunch {

std::string read_proc_file(const std::string& path, std::size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buffer[8192];
  while (text.size() < limit) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace ddplaunch
