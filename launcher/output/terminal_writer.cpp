// Terminal output through one bounded queue and a writer thread (terminal_writer.h). One queue
// for both streams keeps their order: a log line on stderr and the prompt it moves on stdout
// reach a shared terminal in the order they were written.
#include "output/terminal_writer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "output/terminal_stream.h"
#include "output/worker_output.h"

namespace ddplaunch {

namespace {

// The launcher's end waits this long at most for a reader that keeps taking output slowly.
constexpr std::chrono::seconds kExitWaitBound{30};
// The process that writes the rest after the launcher gives up when its reader took nothing
// for this long (a `less` left on its first page, a `tee` that hung for good)...
constexpr std::chrono::minutes kRestWriterPatience{10};
// ...and ends after this long in any case (SIGALRM).
constexpr unsigned kRestWriterLifetimeS = 3600;

// The process that writes the rest holds nothing of the launcher's: no socket, no pipe of a
// worker or of the orphan guard (which must see the launcher's end), no signal handler.
void become_rest_writer_process() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGCHLD}) std::signal(sig, SIG_DFL);
  std::signal(SIGPIPE, SIG_IGN);  // a reader that is gone is an EPIPE: the end
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);
  if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {  // kernels before 5.9: one by one, bounded
    rlimit limit{};
    const int highest =
        ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < (1U << 20) ? static_cast<int>(limit.rlim_cur) : 1 << 20;
    for (int fd = 3; fd < highest; ++fd) ::close(fd);
  }
  ::prctl(PR_SET_NAME, "ddplaunch-rest", 0, 0, 0);
  ::alarm(kRestWriterLifetimeS);
}

class TerminalQueue {
 public:
  // The writer thread is detached: one blocked on a reader that never comes back must not keep
  // the launcher from ending (the process ends it).
  TerminalQueue() {
    if (::pipe2(wake_.data(), O_CLOEXEC | O_NONBLOCK) != 0) wake_ = {-1, -1};
    std::thread([this] { write_out(); }).detach();
  }

  void push(int fd, std::string_view text) {
    std::lock_guard lock(mutex_);
    const std::size_t capacity = kTerminalQueueBytes + (last_lines_ ? kTerminalLastLinesBytes : 0);
    if (handed_over_ || queued_bytes_ + text.size() > capacity) {
      Drops& drops = drops_[index(fd)];
      drops.lines += std::max<std::size_t>(1, static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')));
      drops.bytes += text.size();
      return;
    }
    if (!chunks_.empty() && chunks_.back().fd == fd) chunks_.back().text.append(text);
    else chunks_.push_back({fd, std::string(text)});
    queued_bytes_ += text.size();
    ready_.notify_one();
  }

  void begin_last_lines() {
    std::lock_guard lock(mutex_);
    last_lines_ = true;
  }

  // Until nothing is waiting or being written; once no byte went out for `stalled` (or after
  // kExitWaitBound), the rest is handed to a process that outlives the launcher.
  void finish(std::chrono::milliseconds stalled) {
    std::unique_lock lock(mutex_);
    const auto until = std::chrono::steady_clock::now() + kExitWaitBound;
    std::size_t written_before = written_;
    while (!handed_over_ && (writing_ || has_queued())) {
      const bool quiet = idle_.wait_for(lock, stalled) == std::cv_status::timeout && written_ == written_before;
      if (quiet || std::chrono::steady_clock::now() >= until) return hand_over(lock);
      written_before = written_;
    }
  }

 private:
  struct Chunk {
    int fd = STDOUT_FILENO;
    std::string text;  // consecutive text for one fd is one chunk
  };
  struct Drops {
    std::size_t lines = 0, bytes = 0;
  };
  static std::size_t index(int fd) { return fd == STDOUT_FILENO ? 0 : 1; }

  // With the lock held.
  bool has_queued() const { return !chunks_.empty() || drops_[0].lines > 0 || drops_[1].lines > 0; }
  bool rest_unwritten() const { return offset_ < current_.text.size() || has_queued(); }
  void take_next() {
    if (!chunks_.empty()) {
      current_ = std::move(chunks_.front());
      chunks_.pop_front();
      queued_bytes_ -= current_.text.size();
    } else {  // drained: say what was not shown
      const int fd = drops_[0].lines > 0 ? STDOUT_FILENO : STDERR_FILENO;
      current_ = {fd, drop_notice(fd)};
    }
    offset_ = 0;
  }
  std::string_view unwritten() const { return std::string_view(current_.text).substr(offset_); }

  // The writer thread. current_ and offset_ are its own; the lock guards the rest.
  void write_out() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (offset_ >= current_.text.size()) {
        writing_ = false;
        idle_.notify_all();
        ready_.wait(lock, [this] { return hand_over_ || has_queued(); });
        if (hand_over_) return fork_rest_writer(lock);
        take_next();
        writing_ = true;
      }
      if (hand_over_) return fork_rest_writer(lock);
      lock.unlock();
      const TerminalStream::Step step =
          streams_[index(current_.fd)].write_some(unwritten(), wake_[0], std::chrono::milliseconds(-1));
      lock.lock();
      if (step.outcome == TerminalStream::Outcome::Wrote) {
        offset_ += step.bytes;
        written_ += step.bytes;
      } else if (step.outcome == TerminalStream::Outcome::Failed) {
        offset_ = current_.text.size();  // nobody takes this stream's text
      }
    }
  }

  // The launcher is ending: wakes the writer thread, which forks the process that writes the
  // rest (a copy of this queue as it is now, to the byte), and waits a moment for it.
  void hand_over(std::unique_lock<std::mutex>& lock) {
    hand_over_ = true;
    if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
    ready_.notify_all();
    idle_.wait_for(lock, std::chrono::seconds(2), [this] { return handed_over_; });
  }

  // On the writer thread, the lock held: nothing changes the queue while it is copied.
  void fork_rest_writer(std::unique_lock<std::mutex>& lock) {
    if (rest_unwritten() && ::fork() == 0) write_rest_and_exit(lock);
    handed_over_ = true;  // the rest is the child's now (or, when fork failed, lost)
    idle_.notify_all();
  }

  // The forked process: one thread, this one. It writes what the launcher's reader had not
  // taken, then the count of lines not shown, and ends.
  [[noreturn]] void write_rest_and_exit(std::unique_lock<std::mutex>& lock) {
    lock.release();  // the only thread here; the mutex is not used again
    for (TerminalStream& stream : streams_) stream.become_the_stream();
    become_rest_writer_process();
    for (;;) {
      if (offset_ >= current_.text.size()) {
        if (!has_queued()) ::_exit(0);
        take_next();
      }
      const TerminalStream::Step step =
          streams_[index(current_.fd)].write_some(unwritten(), -1, kRestWriterPatience);
      if (step.outcome != TerminalStream::Outcome::Wrote) ::_exit(1);  // gone, or took nothing for so long
      offset_ += step.bytes;
    }
  }

  // With the lock held, once the queue is empty.
  std::string drop_notice(int fd) {
    Drops& drops = drops_[index(fd)];
    std::string notice = fmt::format(
        "ddplaunch warning: {} was not read for a while: {} line(s) of output ({:.1f} KiB) were not shown here so "
        "that the job could go on (--log-dir keeps every line of the workers)\n",
        fd == STDOUT_FILENO ? "stdout" : "stderr", drops.lines, static_cast<double>(drops.bytes) / 1024.0);
    drops = {};
    return notice;
  }

  std::mutex mutex_;
  std::condition_variable ready_, idle_;
  std::deque<Chunk> chunks_;
  std::size_t queued_bytes_ = 0;
  std::array<Drops, 2> drops_{};
  bool last_lines_ = false;   // the room kept for the launcher's last lines is open
  bool writing_ = true;       // until the thread first waits
  std::size_t written_ = 0;
  bool hand_over_ = false;    // the launcher is ending: the writer thread forks the rest's writer
  bool handed_over_ = false;  // done: text queued from now on is not shown
  std::array<int, 2> wake_{-1, -1};  // a byte here wakes the writer thread from its poll
  // The writer thread's own (and then the rest writer's).
  std::array<TerminalStream, 2> streams_{TerminalStream(STDOUT_FILENO), TerminalStream(STDERR_FILENO)};
  Chunk current_;
  std::size_t offset_ = 0;
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

void terminal_flush(std::chrono::milliseconds stalled) { queue().finish(stalled); }

void terminal_begin_last_lines() { queue().begin_last_lines(); }

}  // namespace ddplaunch
