// For shim unit tests: a bound AF_UNIX datagram socket in a fresh temp dir, standing in for the
// launcher's status socket (what DDPLAUNCH_STATUS_SOCKET names), with receive-with-timeout.
// Closed and removed, dir and all, when destroyed.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "ddplaunch/contract.h"

namespace ddplaunch::testing {

class BoundStatusSocket {
 public:
  BoundStatusSocket() = default;
  BoundStatusSocket(const BoundStatusSocket&) = delete;
  BoundStatusSocket& operator=(const BoundStatusSocket&) = delete;
  ~BoundStatusSocket() {
    if (fd_ >= 0) ::close(fd_);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Makes the dir from `dir_template` (mkdtemp's "...XXXXXX") and binds <dir>/status.sock.
  // Fails the test on error: call as ASSERT_NO_FATAL_FAILURE(socket.open("/tmp/x_XXXXXX")).
  void open(std::string dir_template) {
    ASSERT_NE(::mkdtemp(dir_template.data()), nullptr);
    dir_ = dir_template;
    path_ = dir_ + "/status.sock";
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd_, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path_.c_str());
    ASSERT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  }

  const std::string& dir() const { return dir_; }
  const std::string& path() const { return path_; }

  // The next datagram, or nullopt when none came within `timeout_ms` (or recv failed).
  std::optional<std::string> receive(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return std::nullopt;
    char buf[contract::kMaxStatusBytes + 16];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
  }

 private:
  std::string dir_, path_;
  int fd_ = -1;
};

}  // namespace ddplaunch::testing
