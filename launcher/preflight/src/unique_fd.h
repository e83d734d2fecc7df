// Private: closes a file descriptor when it goes out of scope, so every early return in
// the socket checks releases its socket.
#pragma once

#include <unistd.h>

namespace ddplaunch::preflight {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { if (fd_ >= 0) ::close(fd_); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace ddplaunch::preflight
