// NodeAgent against a fake master: a real ddplaunch node (node rank 1, real
// fake_worker processes) joins a rendezvous server this test runs itself and scripts — the
// master's orders are sent by hand, and what the node reports is read off the connection.
// Every transition of the node's state machine: joining → running → reporting → finished,
// the restart order (stopping → rejoining → running), the stop order, the master's job_end
// code, a signal (and the exit bound when the master never answers), the lost master, a
// refusal, a dismissal, a hot spare given a slot, and probing → running on the verdict.
#include <csignal>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "wire/launcher_messages.h"
#include "wire/order_revision.h"
#include "fake_job_coordinator.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::Generation;
using ddplaunch::testing::BackgroundProcess;
using ddplaunch::testing::RunResult;
namespace rdzv = ddplaunch::rendezvous;
namespace messages = ddplaunch::messages;

constexpr auto kStep = fake_job_coordinator::kEventBound;

using fake_job_coordinator::FakeJobCoordinator;

// ddplaunch as node rank 1 of 2 against the fake master, one fake_worker with `work`.
std::unique_ptr<BackgroundProcess> start_node(const FakeJobCoordinator& master, const std::vector<std::string>& work,
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
  FakeJobCoordinator master({});
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
  master.broadcast(messages::encode(Generation{0}, messages::JobEnd{5}));
  RunResult r = node->wait(kStep);
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 5) << r.output;
}

TEST(NodeAgent, AFailedRankIsReportedAndNamedInTheNodesReport) {
  FakeJobCoordinator master({});
  auto node = start_node(master, {"--sleep-ms", "100", "--exit", "7"});
  master.join_helper_node();
  auto failed = master.next(messages::Kind::WorkerFailed);
  ASSERT_TRUE(failed) << node->output_so_far();
  auto finished = master.next(messages::Kind::NodeFinished);
  ASSERT_TRUE(finished) << node->output_so_far();
  EXPECT_EQ(messages::decode_node_finished(finished->message)->exit_code, 7);
  EXPECT_NE(messages::decode_node_finished(finished->message)->summary.find("rank 1"), std::string::npos);
  master.broadcast(messages::encode(Generation{0}, messages::JobEnd{7}));
  EXPECT_EQ(node->wait(kStep).exit_code, 7);
}

TEST(NodeAgent, ARestartOrderStopsTheWorkersRejoinsAndRunsTheNextGeneration) {
  FakeJobCoordinator master({});
  auto node = start_node(master, kLongWork);
  master.join_helper_node();
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=0", kStep)) << node->output_so_far();
  master.order_restart(Generation{1}, "a test restart");
  ASSERT_TRUE(node->wait_for_output("master ordered a group restart (generation 1): a test restart", kStep));
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=1", kStep)) << node->output_so_far();
  EXPECT_EQ(master.plans(), 2);
  // The stop order now: the node stops its workers and reports "stopped" for generation 1.
  master.broadcast(messages::encode(Generation{1}, messages::Stop{"a test stop", 4}));
  auto finished = master.next(messages::Kind::NodeFinished);
  ASSERT_TRUE(finished) << node->output_so_far();
  EXPECT_EQ(finished->generation, Generation{1});
  EXPECT_EQ(messages::decode_node_finished(finished->message)->summary, "stopped");
  EXPECT_TRUE(node->wait_for_output("master stopped the job: a test stop", kStep));
  master.broadcast(messages::encode(Generation{1}, messages::JobEnd{4}));
  RunResult r = node->wait(kStep);
  EXPECT_EQ(r.exit_code, 4) << r.output;
}

TEST(NodeAgent, ASignalIsReportedAsTheNodesProblemAndItsStatusWins) {
  FakeJobCoordinator master({});
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
  master.broadcast(messages::encode(Generation{0}, messages::JobEnd{143}));
  EXPECT_EQ(node->wait(kStep).exit_code, 143);
}

TEST(NodeAgent, ASignalledNodeEndsByItselfWhenTheMasterNeverAnswers) {
  FakeJobCoordinator master({});
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
  FakeJobCoordinator master({});
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
  FakeJobCoordinator master({.expected_nodes = 2, .membership = false, .token = "a-token-the-node-does-not-have-0123456789"});
  auto node = start_node(master, kLongWork);
  RunResult r = node->wait(kStep);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("refused"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("DDPLAUNCH_GENERATION"), std::string::npos) << "no worker may start";
}

TEST(NodeAgent, AHotSpareWaitsIdleThenTakesTheSlotItIsGiven) {
  FakeJobCoordinator master({.expected_nodes = 2, .membership = true, .token = {}});
  auto node = start_node(master, kLongWork);
  auto member = master.next_member();
  ASSERT_TRUE(member) << node->output_so_far();
  master.on_loop([&] {
    master.server().send_to_member(*member, messages::encode(Generation{0}, messages::Standby{"this launcher is a hot spare of this job"}));
  });
  ASSERT_TRUE(node->wait_for_output("is a hot spare of this job", kStep)) << node->output_so_far();
  EXPECT_FALSE(node->wait_for_output("DDPLAUNCH_GENERATION", 1s)) << "a spare runs no worker";
  master.on_loop([&] { master.server().begin_generation(Generation{1}, {*member}, {}); });  // a spare ran nothing
  ASSERT_TRUE(node->wait_for_output("this hot spare takes the place of node 0 in generation 1", kStep))
      << node->output_so_far();
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=1", kStep)) << node->output_so_far();
  master.broadcast(messages::encode(Generation{1}, messages::JobEnd{0}));
  EXPECT_EQ(node->wait(kStep).exit_code, 0);
}

TEST(NodeAgent, ADismissedNodeStopsItsWorkersAndEndsWithTwo) {
  FakeJobCoordinator master({.expected_nodes = 2, .membership = true, .token = {}});
  auto node = start_node(master, kLongWork);
  auto member = master.next_member();
  ASSERT_TRUE(member) << node->output_so_far();
  master.on_loop([&] { master.server().begin_generation(Generation{0}, {*member}, {}); });
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=0", kStep)) << node->output_so_far();
  master.on_loop([&] { master.server().dismiss_member(*member, "excluded: a test dismissal"); });
  RunResult r = node->wait(kStep);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the master dismissed this node: excluded: a test dismissal"), std::string::npos) << r.output;
}

TEST(NodeAgent, ProbingNodeStartsItsWorkersOnlyOnTheVerdict) {
  FakeJobCoordinator master({});
  auto node = start_node(master, kLongWork, {});  // peer probe on (a loopback master: lo)
  // The helper offers a listener nobody answers on: the node's link to it fails, and says so.
  master.join_helper_node("0123abcd;lo=127.0.0.1:1");  // listener id; ifname=address:port
  auto results = master.next(messages::Kind::ProbeResults);
  ASSERT_TRUE(results) << node->output_so_far();
  EXPECT_FALSE(node->wait_for_output("DDPLAUNCH_GENERATION", 1s)) << "workers started before the verdict";
  master.broadcast(messages::encode(Generation{0}, messages::ProbeVerdict{""}));
  ASSERT_TRUE(node->wait_for_output("DDPLAUNCH_GENERATION=0", kStep)) << node->output_so_far();
  master.broadcast(messages::encode(Generation{0}, messages::Stop{"done", 0}));
  ASSERT_TRUE(master.next(messages::Kind::NodeFinished)) << node->output_so_far();
  master.broadcast(messages::encode(Generation{0}, messages::JobEnd{0}));
  EXPECT_EQ(node->wait(kStep).exit_code, 0);
}

}  // namespace

// etcd: an order carries the election revision of the coordinator that sent it; a node
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
