// Drawing and erasing the in-place status line.
#include "output/live_status_line.h"

#include <unistd.h>

#include "output/worker_output.h"
#include "output/terminal_writer.h"

namespace ddplaunch {

namespace {
constexpr std::string_view kEraseLine = "\r\x1b[2K";  // carriage return, erase the whole line
}  // namespace

void LiveStatusLine::show(std::string_view text) {
  if (!terminal_) return;
  std::lock_guard lock(mutex_);
  std::string line(kEraseLine);
  line.append(text.substr(0, text.find('\n')));
  terminal_write(fd_, line);
  shown_ = true;
}

void LiveStatusLine::erase() {
  if (!shown_) return;
  std::lock_guard lock(mutex_);
  if (!shown_) return;
  terminal_write(fd_, kEraseLine);
  shown_ = false;
}

LiveStatusLine& stderr_status_line() {
  static LiveStatusLine line(STDERR_FILENO, ::isatty(STDERR_FILENO) == 1);
  return line;
}

}  // namespace ddplaunch
