// A TCP relay on 127.0.0.1 in front of a real master, for the hostile suites and the keep-alive
// tests: forwards one connection both ways, whole frames at a time, keeps a copy of the node's
// first frame (its join) and the kind of every frame each way (a body's first line, sealed or
// not), and may rewrite the first frame or any frame from the master on the way.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rendezvous/raw_peer.h"

namespace rdzv_test {

class Relay {
 public:
  // The bytes to send on in place of one whole frame (length prefix included).
  using Rewrite = std::function<std::string(const std::string& framed)>;
  // The same for the index-th frame from the master (from 0: the greeting).
  using RewriteFromMaster = std::function<std::string(std::size_t index, const std::string& framed)>;

  explicit Relay(int upstream_port, Rewrite node_first = nullptr, RewriteFromMaster from_master = nullptr)
      : upstream_port_(upstream_port), node_first_(std::move(node_first)), from_master_(std::move(from_master)) {
    listen_fd_ = listen_on_loopback(port_);
    thread_ = std::thread([this] { run(); });
  }
  ~Relay() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  int port() const { return port_; }
  // The node's first frame as it crossed the relay (length prefix included); "" until then.
  std::string captured() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return captured_;
  }
  // The kinds of the frames that crossed so far ("hb", "msg", ...), in order, each way.
  std::vector<std::string> kinds_from_node() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return kinds_from_node_;
  }
  std::vector<std::string> kinds_from_master() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return kinds_from_master_;
  }

 private:
  // One direction: bytes until whole frames are there, each passed through `rewrite`.
  struct Direction {
    std::string pending;
    std::size_t frames = 0;
    // Appends what arrived; returns the bytes to send on now.
    std::string forward(const char* data, std::size_t n, const RewriteFromMaster& rewrite) {
      pending.append(data, n);
      std::string out;
      while (pending.size() >= 4) {
        std::size_t body = (static_cast<std::size_t>(static_cast<unsigned char>(pending[0])) << 24) |
                           (static_cast<std::size_t>(static_cast<unsigned char>(pending[1])) << 16) |
                           (static_cast<std::size_t>(static_cast<unsigned char>(pending[2])) << 8) |
                           static_cast<unsigned char>(pending[3]);
        if (pending.size() < 4 + body) break;
        std::string frame = pending.substr(0, 4 + body);
        pending.erase(0, 4 + body);
        out += rewrite ? rewrite(frames, frame) : frame;
        ++frames;
      }
      return out;
    }
  };

  static bool send_all(int fd, const std::string& bytes) {
    return bytes.empty() || ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }

  void run() {
    pollfd listener{listen_fd_, POLLIN, 0};
    if (::poll(&listener, 1, 30000) != 1) return;
    int node = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    RawPeer upstream(static_cast<std::uint16_t>(upstream_port_));
    if (node < 0 || !upstream.connected) return;
    RewriteFromMaster from_node = [this](std::size_t index, const std::string& frame) {
      note_kind(kinds_from_node_, frame);
      if (index != 0) return frame;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        captured_ = frame;
      }
      return node_first_ ? node_first_(frame) : frame;
    };
    RewriteFromMaster noted_from_master = [this](std::size_t index, const std::string& frame) {
      note_kind(kinds_from_master_, frame);
      return from_master_ ? from_master_(index, frame) : frame;
    };
    Direction to_master, to_node;
    // Bounded: at most 120 s of 50 ms polls, and over at once when the test ends.
    for (int i = 0; i < 2400 && !stop_; ++i) {
      pollfd fds[2] = {{node, POLLIN, 0}, {upstream.fd, POLLIN, 0}};
      if (::poll(fds, 2, 50) <= 0) continue;
      char buf[65536];
      if (fds[0].revents) {
        ssize_t n = ::recv(node, buf, sizeof buf, 0);
        if (n <= 0 || !send_all(upstream.fd, to_master.forward(buf, static_cast<std::size_t>(n), from_node))) break;
      }
      if (fds[1].revents) {
        ssize_t n = ::recv(upstream.fd, buf, sizeof buf, 0);
        if (n <= 0 || !send_all(node, to_node.forward(buf, static_cast<std::size_t>(n), noted_from_master))) break;
      }
    }
    ::close(node);
  }

  void note_kind(std::vector<std::string>& kinds, const std::string& framed) {
    const std::size_t end = framed.find('\n', 4);
    std::lock_guard<std::mutex> lock(mutex_);
    kinds.push_back(framed.substr(4, end == std::string::npos ? std::string::npos : end - 4));
  }

  int upstream_port_;
  Rewrite node_first_;
  RewriteFromMaster from_master_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::string captured_;
  std::vector<std::string> kinds_from_node_, kinds_from_master_;
  std::thread thread_;
};

}  // namespace rdzv_test
