// Drawing and erasing the in-place status line.
#include "output/live_status_line.h"

#include <unistd.h>

#include <cerrno>

namespace ddplaunch {

namespace {
constexpr std::string_view kEraseLine = "\r\x1b[2K";  // carriage return, erase the whole line

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}
}  // namespace

void LiveStatusLine::show(std::string_view text) {
  if (!terminal_) return;
  std::lock_guard lock(mutex_);
  std::string line(kEraseLine);
  line.append(text.substr(0, text.find('\n')));
  write_all(fd_, line);
  shown_ = true;
}

void LiveStatusLine::erase() {
  if (!shown_) return;
  std::lock_guard lock(mutex_);
  if (!shown_) return;
  write_all(fd_, kEraseLine);
  shown_ = false;
}

LiveStatusLine& stderr_status_line() {
  static LiveStatusLine line(STDERR_FILENO, ::isatty(STDERR_FILENO) == 1);
  return line;
}

}  // namespace ddplaunch
