// A private, non-blocking descriptor on the launcher's stdout or stderr (terminal_stream.h).
#include "output/terminal_stream.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace ddplaunch {

namespace {
// Through a non-blocking descriptor the kernel takes what fits; more per call costs nothing.
constexpr std::size_t kNonBlockingPiece = std::size_t{1} << 20;
}  // namespace

int TerminalStream::writable_fd() {
  struct stat now {};
  if (::fstat(fd_, &now) != 0) return fd_;
  if (checked_ && now.st_dev == device_ && now.st_ino == inode_) return own_ >= 0 ? own_ : fd_;
  // First use, or fd N was pointed elsewhere (dup2) since: open the file it names now.
  if (own_ >= 0 && own_ != fd_) ::close(own_);
  own_ = -1;
  checked_ = true;
  device_ = now.st_dev;
  inode_ = now.st_ino;
  if (!S_ISFIFO(now.st_mode) && !S_ISCHR(now.st_mode)) return fd_;  // a file never makes a writer wait
  const std::string path = "/proc/self/fd/" + std::to_string(fd_);
  // O_NONBLOCK also keeps the open itself from waiting for a FIFO's reader (ENXIO instead).
  const int own = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat opened {};
  if (own >= 0 && ::fstat(own, &opened) == 0 && opened.st_dev == now.st_dev && opened.st_ino == now.st_ino)
    own_ = own;
  else if (own >= 0)
    ::close(own);
  return own_ >= 0 ? own_ : fd_;
}

TerminalStream::Step TerminalStream::write_some(std::string_view text, int wake_fd,
                                                std::chrono::milliseconds patience) {
  const int fd = writable_fd();
  pollfd polled[2] = {{fd, POLLOUT, 0}, {wake_fd, POLLIN, 0}};
  const int timeout = patience.count() < 0 ? -1 : static_cast<int>(std::min<long long>(patience.count(), INT_MAX));
  const int ready = ::poll(polled, wake_fd >= 0 ? 2 : 1, timeout);
  if (ready < 0) return {errno == EINTR ? Outcome::Wrote : Outcome::Failed};
  if (ready == 0) return {Outcome::TimedOut};
  if (wake_fd >= 0 && (polled[1].revents & POLLIN) != 0) return {Outcome::Woken};
  // Through fd N itself (blocking), at most PIPE_BUF: a pipe that polls writable takes that
  // much without waiting.
  const std::size_t piece = std::min(text.size(), own_ >= 0 ? kNonBlockingPiece : std::size_t{PIPE_BUF});
  const ssize_t n = ::write(fd, text.data(), piece);
  if (n > 0) return {Outcome::Wrote, static_cast<std::size_t>(n)};
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return {Outcome::Wrote};
  return {Outcome::Failed};  // the reader is gone (EPIPE) or the stream is broken
}

void TerminalStream::become_the_stream() {
  const int fd = writable_fd();
  if (fd == fd_ || ::dup2(fd, fd_) < 0) return;
  ::close(fd);
  own_ = fd_;  // fd N is the private non-blocking descriptor now
}

}  // namespace ddplaunch
