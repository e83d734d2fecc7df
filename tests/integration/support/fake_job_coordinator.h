// A fake job coordinator (the master launcher's side) for tests of a real ddplaunch node: a
// real rendezvous server on the test's own loop thread, scripted by hand in place of the
// JobCoordinator — the test sends the master's orders and reads what the nodes report off the
// connection (node_agent_test; etcd_order_fencing_test as a scripted coordinator elected in
// etcd). A master that forges the rendezvous protocol itself is
// tests/support/rendezvous/fake_rendezvous_master.h.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <gtest/gtest.h>

#include "wire/launcher_messages.h"
#include "ddplaunch/rendezvous/client.h"
#include "ddplaunch/rendezvous/server.h"

namespace fake_job_coordinator {

namespace rdzv = ddplaunch::rendezvous;
namespace messages = ddplaunch::messages;
using ddplaunch::Generation;
using namespace std::chrono_literals;

inline constexpr auto kEventBound = std::chrono::milliseconds(30s);  // one expected event, on a busy 2-core machine

struct Received {
  messages::Kind kind;
  Generation generation;
  rdzv::Message message;
};

// Which job a fake coordinator serves and, as a coordinator elected in etcd, the election revision
// stamped on every message to the nodes ("": none).
struct Identity {
  std::string job_id = "fake-master";
  std::string order_revision;
};

// The rendezvous server on its own loop thread; the test thread acts on it through on_loop()
// and reads what the nodes sent through next().
class FakeJobCoordinator {
 public:
  struct Options {
    int expected_nodes = 2;
    bool membership = false;   // slots assigned by begin_generation(members); spares allowed
    std::string token;
  };

  explicit FakeJobCoordinator(Options o, Identity identity = {}) : work_(io_.get_executor()), job_id_(identity.job_id) {
    rdzv::ServerOptions options;
    options.job_id = identity.job_id;
    options.order_revision = identity.order_revision;
    options.expected_nodes = o.expected_nodes;
    options.token = o.token;
    options.join_timeout = 60s;
    options.heartbeat_interval = 200ms;
    options.heartbeat_timeout = 5s;
    options.launcher_assigns_slots = o.membership;
    options.max_spares = o.membership ? 2 : 0;
    rdzv::ServerCallbacks callbacks;
    callbacks.plan = [this](Generation generation, const std::vector<rdzv::NodeRecord>&) {
      ++plans_;
      rdzv::JobPlan plan;
      plan.worker_master_addr = "127.0.0.1";
      plan.worker_master_port = 29999;
      plan.init_deadline_s = 30;
      plan.run_id = "fake-run-" + to_string(generation);
      return plan;
    };
    callbacks.on_message = [this](int, const rdzv::Message& m) {
      auto kind = messages::kind_of(m);
      if (!kind) return;
      std::lock_guard lock(mutex_);
      received_.push_back({*kind, m.generation, m});
      changed_.notify_all();
    };
    callbacks.on_member_joined = [this](const rdzv::NodeRecord& r) {
      std::lock_guard lock(mutex_);
      members_.push_back(r.member_id);
      changed_.notify_all();
    };
    server_ = std::make_unique<rdzv::Server>(io_, options, callbacks);
    std::string error = server_->listen("127.0.0.1", 0);
    EXPECT_EQ(error, "");
    port_ = server_->port();
    loop_ = std::thread([this] { io_.run(); });
  }

  ~FakeJobCoordinator() {
    on_loop([this] {
      server_->close();
      helper_.reset();
    });
    work_.reset();
    io_.stop();
    loop_.join();
  }

  std::string master() const { return "127.0.0.1:" + std::to_string(port_); }

  // Runs `fn` on the server's loop and waits for it.
  void on_loop(std::function<void()> fn) {
    std::promise<void> done;
    boost::asio::post(io_, [&] {
      fn();
      done.set_value();
    });
    done.get_future().wait();
  }

  void broadcast(const rdzv::Message& m) { on_loop([&] { server_->broadcast(m); }); }

  // The next message of `kind` from the nodes (older ones of other kinds are skipped), or
  // nothing within `bound`.
  std::optional<Received> next(messages::Kind kind, std::chrono::milliseconds bound = kEventBound) {
    std::unique_lock lock(mutex_);
    std::optional<Received> found;
    changed_.wait_for(lock, bound, [&] {
      for (; read_ < received_.size(); ++read_)
        if (received_[read_].kind == kind) {
          found = received_[read_++];
          return true;
        }
      return false;
    });
    return found;
  }

  std::optional<int> next_member(std::chrono::milliseconds bound = kEventBound) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, bound, [&] { return members_read_ < members_.size(); })) return std::nullopt;
    return members_[members_read_++];
  }

  // A second node (rank 0) held by the test itself: no workers, it only completes the job's
  // node count. With `probe_endpoints` it offers peer-probe listeners like a real node.
  void join_helper_node(const std::string& probe_endpoints = "") {
    on_loop([&] {
      rdzv::ClientOptions options;
      options.job_id = job_id_;
      options.host = "127.0.0.1";
      options.port = port_;
      options.heartbeat_interval = 200ms;
      options.heartbeat_timeout = 5s;
      helper_ = std::make_unique<rdzv::Client>(io_, options, rdzv::ClientCallbacks{
                                                                 .on_assignment = [](const rdzv::Assignment&) {},
                                                                 .on_refused = [](const std::string&) {},
                                                                 .on_message = [](const rdzv::Message&) {},
                                                                 .on_lost = [](const std::string&) {},
                                                                 .on_progress = nullptr,
                                                             });
      rdzv::NodeFacts facts;
      facts.hostname = "helper";
      facts.requested_node_rank = 0;
      facts.expected_nodes = 2;
      facts.probe_endpoints = probe_endpoints;
      helper_->join(facts);
    });
  }

  // Restart: every node rejoins for `generation`; the helper node rejoins by itself.
  void order_restart(Generation generation, const std::string& reason) {
    on_loop([&] {
      server_->broadcast(messages::encode(generation, messages::Restart{reason}));
      server_->begin_generation(generation);
      if (helper_) helper_->rejoin(generation);
    });
  }

  void close() { on_loop([&] { server_->close(); }); }
  rdzv::Server& server() { return *server_; }
  int plans() const { return plans_; }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::string job_id_;
  std::unique_ptr<rdzv::Server> server_;
  std::unique_ptr<rdzv::Client> helper_;
  std::thread loop_;
  std::uint16_t port_ = 0;
  std::atomic<int> plans_{0};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Received> received_;
  std::size_t read_ = 0;
  std::vector<int> members_;
  std::size_t members_read_ = 0;
};

}  // namespace fake_job_coordinator
