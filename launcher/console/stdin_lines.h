// The lines a script pipes into `ddplaunch debug` (off a terminal): stdin read in blocks on a
// thread of its own (the read blocks), split into lines, each cut at the console's bound
// (what was cut is counted, so that it can be said), handed over in order. The queue is
// bounded: while it is full the reader waits, so a long input is never held in memory.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ddplaunch {

struct StdinLine {
  std::string text;            // without its newline, at most kMaxConsoleLineBytes
  std::size_t cut_bytes = 0;  // how much of the line past the bound was dropped
};

class StdinLines {
 public:
  // Starts reading `fd` (the thread is detached: at the end it may still wait in a read).
  static std::shared_ptr<StdinLines> start(int fd);
  // The lines read so far, in order (the reader goes on).
  std::vector<StdinLine> take();
  // Nothing more is taken: the reader ends at its next line.
  void stop();

  static constexpr std::size_t kMaxQueuedLines = 256;

 private:
  void read_all(int fd);
  bool push(StdinLine line);  // false once stopped

  std::mutex mutex_;
  std::condition_variable room_;
  std::deque<StdinLine> lines_;
  bool stopped_ = false;
};

}  // namespace ddplaunch
