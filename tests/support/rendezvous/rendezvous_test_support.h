// Shared by the rendezvous unit tests: fast timeouts, a bounded event-loop runner, and a
// client/server harness on 127.0.0.1 with an ephemeral port, all in one io_context.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>  // before Asio (Boost 1.74 + g++ 12)

#include <boost/asio.hpp>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/rendezvous.h"

namespace rdzv_test {

using namespace ddplaunch::rendezvous;
using namespace std::chrono_literals;

// Runs the loop until pred() holds or `limit` passes; returns pred().
inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& pred,
                      std::chrono::milliseconds limit = 5000ms) {
  auto deadline = Clock::now() + limit;
  while (!pred() && Clock::now() < deadline) {
    io.restart();
    io.run_for(5ms);
  }
  return pred();
}

inline void run_for(boost::asio::io_context& io, std::chrono::milliseconds d) {
  io.restart();
  io.run_for(d);
}

inline ServerOptions fast_server(int nodes, std::string job = "job-a") {
  ServerOptions o;
  o.job_id = std::move(job);
  o.expected_nodes = nodes;
  o.join_timeout = 10000ms;
  o.handshake_timeout = 300ms;
  o.heartbeat_interval = 50ms;
  o.heartbeat_timeout = 400ms;
  o.progress_interval = 50ms;
  return o;
}

// The plan a test's master answers with: a store address and an init deadline as a real master
// gives (nodes refuse an assignment without a positive deadline).
inline JobPlan test_plan() {
  JobPlan plan;
  plan.worker_master_addr = "127.0.0.1";
  plan.worker_master_port = 29500;
  plan.init_deadline_s = 60;
  return plan;
}

// What one client saw.
struct ClientLog {
  std::vector<Assignment> assignments;
  std::vector<std::string> refusals, losses, impostors;
  std::vector<Message> messages;
  int progress_calls = 0;
  std::vector<std::string> last_missing;
};

struct TestClient {
  std::unique_ptr<Client> client;
  std::shared_ptr<ClientLog> log = std::make_shared<ClientLog>();
};

inline ClientOptions fast_client(std::uint16_t port, std::string job = "job-a") {
  ClientOptions o;
  o.job_id = std::move(job);
  o.host = "127.0.0.1";
  o.port = port;
  o.connect_timeout = 1000ms;
  o.join_timeout = 10000ms;
  o.retry_interval = 50ms;
  o.heartbeat_interval = 50ms;
  o.heartbeat_timeout = 400ms;
  return o;
}

inline TestClient make_client(boost::asio::io_context& io, ClientOptions o) {
  TestClient tc;
  auto log = tc.log;
  ClientCallbacks cb;
  cb.on_assignment = [log](const Assignment& a) { log->assignments.push_back(a); };
  cb.on_refused = [log](const std::string& r) { log->refusals.push_back(r); };
  cb.on_lost = [log](const std::string& r) { log->losses.push_back(r); };
  cb.on_impostor = [log](const std::string& r) { log->impostors.push_back(r); };
  cb.on_message = [log](const Message& m) { log->messages.push_back(m); };
  cb.on_progress = [log](int, int, const std::vector<std::string>& missing) {
    ++log->progress_calls;
    log->last_missing = missing;
  };
  tc.client = std::make_unique<Client>(io, std::move(o), std::move(cb));
  return tc;
}

inline NodeFacts facts(std::string host, int nproc = 1, int requested_rank = -1) {
  NodeFacts f;
  f.hostname = std::move(host);
  f.addresses = {"127.0.0.1", "10.0.0.1"};
  f.nproc = nproc;
  f.requested_node_rank = requested_rank;
  f.gpu_count = nproc;
  f.launcher_version = "0.1.0";
  return f;
}

// A blocking TCP connection to 127.0.0.1:port (close-on-exec): a hand-driven peer. -1 on failure.
inline int connect_loopback(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    fd = -1;
  }
  return fd;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace rdzv_test
