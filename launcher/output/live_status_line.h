// A one-line status that a terminal shows in place: each update redraws the same line
// ("\r" + erase), and the next ordinary output line (a log line, a worker line) erases it
// first, so nothing is ever written after it on the same line. Off a terminal it is never
// drawn: callers print plain lines instead (see join_progress.h).
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>

namespace ddplaunch {

class LiveStatusLine {
 public:
  LiveStatusLine(int fd, bool terminal) : fd_(fd), terminal_(terminal) {}
  bool on_terminal() const { return terminal_; }
  void show(std::string_view text);  // no newline in text; ignored off a terminal
  void erase();                      // before other output to the same terminal; cheap when nothing is shown

 private:
  int fd_;
  bool terminal_;
  std::atomic<bool> shown_{false};
  std::mutex mutex_;
};

// The launcher's one status line, on stderr (where the log goes).
LiveStatusLine& stderr_status_line();

}  // namespace ddplaunch
