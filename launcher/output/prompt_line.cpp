// Drawing, hiding and redrawing the console's prompt line.
#include "output/prompt_line.h"

#include <unistd.h>

#include "output/worker_output.h"
#include "output/terminal_writer.h"

namespace ddplaunch {

namespace {
constexpr std::string_view kEraseLine = "\r\x1b[2K";  // carriage return, erase the whole line
}  // namespace

void PromptLine::show(std::string rendered) {
  std::lock_guard lock(mutex_);
  const bool was_drawn = !rendered_.empty() && hidden_depth_ == 0;
  rendered_ = std::move(rendered);
  if (hidden_depth_ > 0) return;
  if (rendered_.empty()) {
    if (was_drawn) terminal_write(fd_, kEraseLine);
    return;
  }
  terminal_write(fd_, std::string(kEraseLine) + rendered_);
}

void PromptLine::hide() {
  std::lock_guard lock(mutex_);
  if (hidden_depth_++ == 0 && !rendered_.empty()) terminal_write(fd_, kEraseLine);
}

void PromptLine::restore() {
  std::lock_guard lock(mutex_);
  if (hidden_depth_ > 0 && --hidden_depth_ == 0 && !rendered_.empty()) terminal_write(fd_, std::string(kEraseLine) + rendered_);
}

bool PromptLine::shown() const {
  std::lock_guard lock(mutex_);
  return !rendered_.empty();
}

PromptLine& stdout_prompt_line() {
  static PromptLine line(STDOUT_FILENO);
  return line;
}

}  // namespace ddplaunch
