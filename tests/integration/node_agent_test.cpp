// NodeAgent against a fake master (issue 27): a real ddplaunch node (node rank 1, real
// fake_worker processes) joins a rendezvous server this test runs itself and scripts — the
// master's orders are sent by hand, and what the node reports is read off the connection.
// Every transition of the node's state machine: joining → running → reporting → finished,
// the restart order (stopping → rejoining → running), the stop order, the master's job_end
// code, a signal (and the exit bound when the master never answers), the lost master, a
// refusal, a dismissal, a hot spare given a slot, and probing → running on the verdict.
#include <atomic>
#include <csignal>
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

#include "agent/launcher_messages.h"
#include "agent/order_revision.h"
#include "ddplaunch/rendezvous/client.h"
#include "ddplaunch/rendezvous/server.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::testing::BackgroundProcess;
using ddplaunch::testing::RunResult;
namespace rdzv = ddplaunch::rendezvous;
namespace messages = ddplaunch::messages;

constexpr auto kStep = 30s;  // one expected event, on a busy 2-core machine

struct Received {
  messages::Kind kind;
  long generation = 0;
  rdzv::Message message;
};

// The rendezvous server on its own loop thread; the test thread acts on it through on_loop()
// and reads what the nodes sent through next().
class FakeMaster {
 public:
  struct Options {
    int expected_nodes = 2;
    bool membership = false;   // slots assigned by begin_generation(members); spares allowed
    std::string token;
  };

  explicit FakeMaster(Options o) : work_(io_.get_executor()) {
    rdzv::ServerOptions options;
    options.job_id = "fake-master";
    options.expected_nodes = o.expected_nodes;
    options.token = o.token;
    options.join_timeout = 60s;
    options.heartbeat_interval = 200ms;
    options.heartbeat_timeout = 5s;
    options.launcher_assigns_slots = o.membership;
    options.max_spares = o.membership ? 2 : 0;
    rdzv::ServerCallbacks callbacks;
    callbacks.plan = [this](std::uint64_t generation, const std::vector<rdzv::NodeRecord>&) {
      ++plans_;
      rdzv::JobPlan plan;
      plan.worker_master_addr = "127.0.0.1";
      plan.worker_master_port = 29999;
      plan.timeout_s = 30;
      plan.run_id = "fake-run-" + std::to_string(generation);
      return plan;
    };
    callbacks.on_message = [this](int, const rdzv::Message& m) {
      auto kind = messages::kind_of(m);
      if (!kind) return;
      std::lock_guard lock(mutex_);
      received_.push_back({*kind, static_cast<long>(m.generation), m});
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

  ~FakeMaster() {
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
  std::optional<Received> next(messages::Kind kind, std::chrono::milliseconds bound = kStep) {
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

  std::optional<int> next_member(std::chrono::milliseconds bound = kStep) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, bound, [&] { return members_read_ < members_.size(); })) return std::nullopt;
    return members_[members_read_++];
  }

  // A second node (rank 0) held by the test itself: no workers, it only completes the job's
  // node count. With `probe_endpoints` it offers peer-probe listeners like a real node.
  void join_helper_node(const std::string& probe_endpoints = "") {
    on_loop([&] {
      rdzv::ClientOptions options;
      options.job_id = "fake-master";
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
  void order_restart(long generation, const std::string& reason) {
    on_loop([&] {
      server_->begin_generation(static_cast<std::uint64_t>(generation));
      server_->broadcast(messages::encode(generation, messages::Restart{reason}));
      if (helper_) helper_->rejoin(static_cast<std::uint64_t>(generation));
    });
  }

  void close() { on_loop([&] { server_->close(); }); }
  rdzv::Server& server() { return *server_; }
  int plans() const { return plans_; }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
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

// ddplaunch as node rank 1 of 2 against the fake master, one fake_worker with `work`.
std::unique_ptr<BackgroundProcess> start_node(const FakeMaster& master, const std::vector<std::string>& work,
                                              const std::vector<std::string>& flags = {"--no-peer-probe"}) {
  std::vector<std::string> argv{DDPLAUNCH_BIN, "--nodes", "2", "--node-rank", "1", "--nproc-per-node", "1",
                                "--master", master.master(), "--job-id", "fake-master", "--grace", "1",
                                "--heartbeat-interval", "0.2", "--heartbeat-timeout", "5"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.push_back(FAKE_WORKER_BIN);
  argv.insert(argv.end(), work.begin(), work.end());
  auto node = std::make_unique<BackgroundProcess>();
  EXPECT_TRUE(node->start(argv));
  return node;
}

const std::vector<std::string> kLongWork{"--print-env", "--sleep-ms", "60000"};

TEST(NodeAgent, RunsReportsItsWorkersEndAndExitsWithTheMastersCode) {
  FakeMaster master({});
  auto node = start_node(master, {"--sleep-ms", "200", "--exit", "0"});
  master.join_helper_node();
  auto finished = master.next(messages::Kind::NodeFinished);
  ASSERT_TRUE(finished) << node->output_so_far();
  auto report = messages::decode_node_finished(finished->message);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->exit_code, 0);
  EXPECT_EQ(report->summary, "all workers succeeded");
  // The node waits for the master's word (Reporting) and ends with its code, not its own.
  EXPECT_FALSE(node->wait_for_output("job succeeded", 500ms));
  master.broadcast(messages::encode(0, messages::JobEnd{5}));
  RunResult r = node->wait(kStep);
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 5) << r.output;
}

TEST(NodeAgent, AFailedRankIsReportedAndNamedInTheNodesReport) {
  FakeMaster master({});
  auto node = start_node(master, {"--sleep-ms", "100", "--exit", "7"});
  master.join_helper_node();
  auto failed = master.next(messages::Kind::WorkerFailed);
  ASSERT_TRUE(failed) << node->output_so_far();
  auto finished = master.next(messages::Kind::NodeFinished);
  ASSERT_TRUE(finished) << node->output_so_far();
  EXPECT_EQ(messages::decode_node_finished(finished->message)->exit_code, 7);
  EXPECT_NE(messages::decode_node_finished(finished->message)->summary.find("rank 1"), std::string::npos);
  master.broadcast(messages::encode(0, messages::JobEnd{7}));
  EXPECT_EQ(node->wait(kStep).exit_code, 7);
}

TEST(NodeAgent, ARestartOrderStopsTheWorkersRejoinsAndRunsTheNextGeneration) {
  FakeMaster master({});
  auto node = start_node(master, kLongWork);
  master.join_helper_node();
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=0", kStep)) << node->output_so_far();
  master.order_restart(1, "a test restart");
  ASSERT_TRUE(node->wait_for_output("master ordered a group restart (generation 1): a test restart", kStep));
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=1", kStep)) << node->output_so_far();
  EXPECT_EQ(master.plans(), 2);
  // The stop order now: the node stops its workers and reports "stopped" for generation 1.
  master.broadcast(messages::encode(1, messages::Stop{"a test stop", 4}));
  auto finished = master.next(messages::Kind::NodeFinished);
  ASSERT_TRUE(finished) << node->output_so_far();
  EXPECT_EQ(finished->generation, 1);
  EXPECT_EQ(messages::decode_node_finished(finished->message)->summary, "stopped");
  EXPECT_TRUE(node->wait_for_output("master stopped the job: a test stop", kStep));
  master.broadcast(messages::encode(1, messages::JobEnd{4}));
  RunResult r = node->wait(kStep);
  EXPECT_EQ(r.exit_code, 4) << r.output;
}

TEST(NodeAgent, ASignalIsReportedAsTheNodesProblemAndItsStatusWins) {
  FakeMaster master({});
  auto node = start_node(master, kLongWork);
  master.join_helper_node();
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=0", kStep)) << node->output_so_far();
  ASSERT_TRUE(node->send_signal(SIGTERM));
  auto problem = master.next(messages::Kind::NodeProblem);
  ASSERT_TRUE(problem) << node->output_so_far();
  EXPECT_EQ(messages::decode_node_problem(problem->message)->exit_code, 143);
  EXPECT_NE(messages::decode_node_problem(problem->message)->message.find("interrupted by SIGTERM"), std::string::npos);
  auto finished = master.next(messages::Kind::NodeFinished);
  ASSERT_TRUE(finished) << node->output_so_far();
  EXPECT_EQ(messages::decode_node_finished(finished->message)->exit_code, 143);  // not the killed worker's
  master.broadcast(messages::encode(0, messages::JobEnd{143}));
  EXPECT_EQ(node->wait(kStep).exit_code, 143);
}

TEST(NodeAgent, ASignalledNodeEndsByItselfWhenTheMasterNeverAnswers) {
  FakeMaster master({});
  auto node = start_node(master, kLongWork);
  master.join_helper_node();
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=0", kStep)) << node->output_so_far();
  ASSERT_TRUE(node->send_signal(SIGINT));
  ASSERT_TRUE(master.next(messages::Kind::NodeFinished)) << node->output_so_far();
  // No job_end ever comes: the exit bound (grace 1 s + 5 s) ends the node with its signal.
  RunResult r = node->wait(kStep);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 130) << r.output;
}

TEST(NodeAgent, ALostMasterStopsTheWorkersAndEndsWithOne) {
  FakeMaster master({});
  auto node = start_node(master, {"--print-env", "--fork-grandchild", "--sleep-ms", "60000"});
  master.join_helper_node();
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=0", kStep)) << node->output_so_far();
  master.close();
  RunResult r = node->wait(kStep);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("lost the master " + master.master()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stopping this node's workers"), std::string::npos) << r.output;
}

TEST(NodeAgent, ARefusedJoinEndsWithTwoAndTheMastersReason) {
  FakeMaster master({.expected_nodes = 2, .membership = false, .token = "a-token-the-node-does-not-have-0123456789"});
  auto node = start_node(master, kLongWork);
  RunResult r = node->wait(kStep);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("refused"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("DDPLAUNCH_GENERATION"), std::string::npos) << "no worker may start";
}

TEST(NodeAgent, AHotSpareWaitsIdleThenTakesTheSlotItIsGiven) {
  FakeMaster master({.expected_nodes = 2, .membership = true, .token = {}});
  auto node = start_node(master, kLongWork);
  auto member = master.next_member();
  ASSERT_TRUE(member) << node->output_so_far();
  master.on_loop([&] {
    master.server().send_to_member(*member, messages::encode(0, messages::Standby{"this launcher is a hot spare of this job"}));
  });
  ASSERT_TRUE(node->wait_for_output("is a hot spare of this job", kStep)) << node->output_so_far();
  EXPECT_FALSE(node->wait_for_output("DDPLAUNCH_GENERATION", 1s)) << "a spare runs no worker";
  master.on_loop([&] { master.server().begin_generation(1, {*member}, {}); });  // a spare ran nothing
  ASSERT_TRUE(node->wait_for_output("this hot spare takes the place of node 0 in generation 1", kStep))
      << node->output_so_far();
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=1", kStep)) << node->output_so_far();
  master.broadcast(messages::encode(1, messages::JobEnd{0}));
  EXPECT_EQ(node->wait(kStep).exit_code, 0);
}

TEST(NodeAgent, ADismissedNodeStopsItsWorkersAndEndsWithTwo) {
  FakeMaster master({.expected_nodes = 2, .membership = true, .token = {}});
  auto node = start_node(master, kLongWork);
  auto member = master.next_member();
  ASSERT_TRUE(member) << node->output_so_far();
  master.on_loop([&] { master.server().begin_generation(0, {*member}, {}); });
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=0", kStep)) << node->output_so_far();
  master.on_loop([&] { master.server().dismiss_member(*member, "excluded: a test dismissal"); });
  RunResult r = node->wait(kStep);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the master dismissed this node: excluded: a test dismissal"), std::string::npos) << r.output;
}

TEST(NodeAgent, ProbingNodeStartsItsWorkersOnlyOnTheVerdict) {
  FakeMaster master({});
  auto node = start_node(master, kLongWork, {});  // peer probe on (a loopback master: lo)
  // The helper offers a listener nobody answers on: the node's link to it fails, and says so.
  master.join_helper_node("0123abcd;lo=127.0.0.1:1");  // listener id; ifname=address:port
  auto results = master.next(messages::Kind::ProbeResults);
  ASSERT_TRUE(results) << node->output_so_far();
  EXPECT_FALSE(node->wait_for_output("DDPLAUNCH_GENERATION", 1s)) << "workers started before the verdict";
  master.broadcast(messages::encode(0, messages::ProbeVerdict{""}));
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=0", kStep)) << node->output_so_far();
  master.broadcast(messages::encode(0, messages::Stop{"done", 0}));
  ASSERT_TRUE(master.next(messages::Kind::NodeFinished)) << node->output_so_far();
  master.broadcast(messages::encode(0, messages::JobEnd{0}));
  EXPECT_EQ(node->wait(kStep).exit_code, 0);
}

}  // namespace

// issue 28: an order carries the election revision of the coordinator that sent it; a node
// obeys none older than the coordinator etcd names. A stamp wins over the connection's
// revision, and a stamp that is not a revision counts as older than any.
TEST(NodeAgentOrders, AnOrdersRevisionIsItsStampElseItsConnections) {
  rdzv::Message order{"restart", 3, {}};
  EXPECT_EQ(ddplaunch::order_revision(order, 7), 7);
  order.fields[rdzv::kOrderRevisionField] = "12";
  EXPECT_EQ(ddplaunch::order_revision(order, 7), 12);
  order.fields[rdzv::kOrderRevisionField] = "5";
  EXPECT_EQ(ddplaunch::order_revision(order, 7), 5);
  for (const char* garbage : {"", "abc", "-3", "12x", " 12", "99999999999999999999"}) {
    order.fields[rdzv::kOrderRevisionField] = garbage;
    EXPECT_EQ(ddplaunch::order_revision(order, 7), 0) << "'" << garbage << "'";
  }
}
