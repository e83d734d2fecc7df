// Reading a script's lines for the remote console.
#include "console/stdin_lines.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <thread>

#include "console/typed_line.h"

namespace ddplaunch {

std::shared_ptr<StdinLines> StdinLines::start(int fd) {
  auto lines = std::make_shared<StdinLines>();
  std::thread([lines, fd] { lines->read_all(fd); }).detach();  // the thread keeps `lines` alive
  return lines;
}

void StdinLines::read_all(int fd) {
  std::array<char, 65536> block;
  StdinLine line;
  for (;;) {
    const ssize_t n = ::read(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // end of input: a last line without its newline is not a command
    for (const char c : std::string_view(block.data(), static_cast<std::size_t>(n))) {
      if (c != '\n') {
        if (line.text.size() < kMaxConsoleLineBytes) line.text += c;
        else ++line.cut_bytes;
        continue;
      }
      if (!push(std::move(line))) return;
      line = StdinLine{};
    }
  }
}

bool StdinLines::push(StdinLine line) {
  std::unique_lock lock(mutex_);
  room_.wait(lock, [&] { return stopped_ || lines_.size() < kMaxQueuedLines; });
  if (stopped_) return false;
  lines_.push_back(std::move(line));
  return true;
}

std::vector<StdinLine> StdinLines::take() {
  std::lock_guard lock(mutex_);
  std::vector<StdinLine> out(std::make_move_iterator(lines_.begin()), std::make_move_iterator(lines_.end()));
  lines_.clear();
  room_.notify_all();
  return out;
}

void StdinLines::stop() {
  std::lock_guard lock(mutex_);
  stopped_ = true;
  room_.notify_all();
}

}  // namespace ddplaunch
