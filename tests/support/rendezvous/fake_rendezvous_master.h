// A fake rendezvous master at the wire level, for tests of what a node believes: greets like a
// master, reads the node's request and answers with whatever frames the test forges (no real
// rendezvous server behind it). Shared by unit and integration tests. Not to be confused with
// tests/integration/support/fake_job_coordinator.h (a real rendezvous server whose master's
// orders the test scripts).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ddplaunch/rendezvous/codec.h"
#include "ddplaunch/rendezvous/token_proof.h"
#include "ddplaunch/rendezvous/types.h"
#include "raw_peer.h"

namespace rdzv_test {

using ddplaunch::rendezvous::encode_frame;
using ddplaunch::rendezvous::Frame;
using ddplaunch::rendezvous::FrameReader;
using ddplaunch::rendezvous::kProtocolVersion;
using ddplaunch::rendezvous::random_nonce;

// A fake rendezvous master in its own thread: greets with a nonce, reads one request, answers with
// `answer(request, master_nonce)`. By default it serves the first connection and holds it
// until the test ends; with every_connection it serves each connection that comes (a squatter
// or impostor on a port), closes it after answering, and counts them, until close(). Bounded:
// every wait is a poll of at most 5 s (100 ms between connections).
class FakeRendezvousMaster {
 public:
  using Answer = std::function<std::vector<Frame>(const Frame& request, const std::string& master_nonce)>;
  explicit FakeRendezvousMaster(Answer answer, bool every_connection = false)
      : answer_(std::move(answer)), every_connection_(every_connection) {
    listen_fd_ = listen_on_loopback(port_);
    thread_ = std::thread([this] { every_connection_ ? serve_each() : serve_first(); });
  }
  ~FakeRendezvousMaster() { close(); }
  // Stops serving and frees the port (the real master may take it then).
  void close() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
  }
  std::uint16_t port() const { return port_; }
  int connections() const { return connections_; }

 private:
  bool readable(int fd, int timeout_ms = 5000) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) == 1;
  }
  void serve_first() {
    if (!readable(listen_fd_)) return;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    ++connections_;
    answer_one(fd);
    for (int i = 0; i < 1000 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ::close(fd);
  }
  void serve_each() {
    for (long round = 0; round < 1000000 && !stop_; ++round) {
      if (!readable(listen_fd_, 100)) continue;
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++connections_;
      answer_one(fd);
      ::close(fd);
    }
  }
  void answer_one(int fd) {
    std::string nonce = random_nonce();
    Frame hello;
    hello.kind = "hello";
    hello.fields = {{"nonce", nonce}, {"protocol", std::to_string(kProtocolVersion)}};
    std::string out = encode_frame(hello);
    ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    FrameReader reader(1 << 20);
    Frame request;
    std::string error;
    bool got = false;
    for (int i = 0; i < 100 && !got && readable(fd); ++i) {
      char buf[4096];
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      reader.append(buf, static_cast<std::size_t>(n));
      got = reader.next(request, error) == FrameReader::Status::kFrame;
    }
    if (!got) return;
    for (const Frame& f : answer_(request, nonce)) {
      out = encode_frame(f);
      ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    }
  }

  Answer answer_;
  bool every_connection_ = false;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace rdzv_test
