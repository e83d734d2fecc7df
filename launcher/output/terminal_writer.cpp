// Terminal output through one bounded queue and a writer thread (terminal_writer.h). One queue
// for both streams keeps their order: a log line on stderr and the prompt it moves on stdout
// reach a shared terminal in the order they were written.
#include "output/terminal_writer.h"

#include <unistd.h>

#include <array>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "output/worker_output.h"

namespace ddplaunch {

namespace {

class TerminalQueue {
 public:
  // The writer thread is detached: one blocked on a reader that never comes back must not keep
  // the launcher from ending (the process ends it).
  TerminalQueue() { std::thread([this] { write_out(); }).detach(); }

  void push(int fd, std::string_view text) {
    std::lock_guard lock(mutex_);
    Drops& drops = drops_[index(fd)];
    if (queued_bytes_ + text.size() > kTerminalQueueBytes) {
      ++drops.pieces;
      drops.bytes += text.size();
      return;
    }
    if (!chunks_.empty() && chunks_.back().first == fd) chunks_.back().second.append(text);
    else chunks_.emplace_back(fd, std::string(text));
    queued_bytes_ += text.size();
    ready_.notify_one();
  }

  // Until nothing is waiting or being written, or no byte went out for `stalled`.
  void drain(std::chrono::milliseconds stalled) {
    std::unique_lock lock(mutex_);
    std::size_t written_before = written_;
    while (!chunks_.empty() || writing_) {
      if (idle_.wait_for(lock, stalled) == std::cv_status::timeout && written_ == written_before) return;
      written_before = written_;
    }
  }

 private:
  struct Drops {
    std::size_t pieces = 0, bytes = 0;
  };
  static std::size_t index(int fd) { return fd == STDOUT_FILENO ? 0 : 1; }

  void write_out() {
    std::pair<int, std::string> chunk;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        writing_ = false;
        idle_.notify_all();
        ready_.wait(lock, [this] { return !chunks_.empty() || drops_[0].pieces > 0 || drops_[1].pieces > 0; });
        if (!chunks_.empty()) {
          chunk = std::move(chunks_.front());
          chunks_.pop_front();
          queued_bytes_ -= chunk.second.size();
        } else {  // drained: say what was not shown
          const int fd = drops_[0].pieces > 0 ? STDOUT_FILENO : STDERR_FILENO;
          chunk = {fd, drop_notice(fd)};
        }
        writing_ = true;
      }
      write_fully(chunk.first, chunk.second);
      std::lock_guard lock(mutex_);
      written_ += chunk.second.size();
    }
  }

  // With the lock held, once the queue is empty.
  std::string drop_notice(int fd) {
    Drops& drops = drops_[index(fd)];
    std::string notice = fmt::format(
        "ddplaunch warning: {} was not read for a while: {} piece(s) of output ({:.1f} KiB), whole lines, were not "
        "shown here so that the job could go on (--log-dir keeps every line of the workers)\n",
        fd == STDOUT_FILENO ? "stdout" : "stderr", drops.pieces, static_cast<double>(drops.bytes) / 1024.0);
    drops = {};
    return notice;
  }

  std::mutex mutex_;
  std::condition_variable ready_, idle_;
  std::deque<std::pair<int, std::string>> chunks_;  // consecutive text for one fd is one chunk
  std::size_t queued_bytes_ = 0;
  std::array<Drops, 2> drops_{};
  bool writing_ = true;  // until the thread first waits
  std::size_t written_ = 0;
};

// Made on first use and never destroyed (its thread outlives static destructors); what is
// queued is written out at exit, bounded like terminal_flush.
TerminalQueue& queue() {
  static TerminalQueue* queue = [] {
    auto* made = new TerminalQueue;
    std::atexit([] { terminal_flush(); });
    return made;
  }();
  return *queue;
}

}  // namespace

void terminal_write(int fd, std::string_view text) {
  if (fd != STDOUT_FILENO && fd != STDERR_FILENO) {
    write_fully(fd, text);
    return;
  }
  if (!text.empty()) queue().push(fd, text);
}

void terminal_flush(std::chrono::milliseconds stalled) { queue().drain(stalled); }

}  // namespace ddplaunch
