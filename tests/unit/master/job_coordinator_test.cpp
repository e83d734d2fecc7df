// The JobCoordinator through its seam: node messages and rendezvous events in, what it tells
// the nodes recorded by a JobChannel double (no rendezvous server, no sockets; its timers run
// on a local io_context). Decisions are the JobPolicy's (tested on their own); these check
// that the shell carries them out: the orders reach the nodes, in order, after the backoff,
// behind etcd's fence, and stack rounds gather the nodes' answers.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "master/fenced_decisions.h"
#include "master/job_coordinator.h"
#include "wire/launcher_messages.h"
#include "recording_channel.h"
#include "two_node_settings.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;

CoordinatorSettings two_node_job() {
  CoordinatorSettings s = two_node_settings("coordinator-test");
  s.config.restart.backoff_s = 0.01;
  s.config.restart.backoff_max_s = 0.01;
  s.config.restart.jitter = 0;
  s.worker_master_addr = "10.0.0.1";
  s.worker_bind_address = "127.0.0.1";
  return s;
}

std::vector<rendezvous::NodeRecord> two_nodes() {
  std::vector<rendezvous::NodeRecord> nodes(2);
  for (int i = 0; i < 2; ++i) {
    nodes[i].node_rank = i;
    nodes[i].facts.hostname = "host" + std::to_string(i);
    nodes[i].facts.addresses = {"10.0.0." + std::to_string(i + 1)};
    nodes[i].facts.nproc = 2;
  }
  return nodes;
}

FailureReport init_failure(int node, int rank) {
  FailureReport r;
  r.host = "host" + std::to_string(node);
  r.failure.node_rank = node;
  r.failure.global_rank = rank;
  r.failure.local_rank = rank % 2;
  r.failure.phase = FailurePhase::Init;
  r.failure.kind = FailureKind::InitFailed;
  r.failure.status = ExitStatus{false, 1, 0, false};
  r.failure.detail = "ncclCommInitRank failed: unhandled cuda error";
  return r;
}

// Runs the coordinator's timers until `done` or 5 s.
void run_until(boost::asio::io_context& io, const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (!done() && std::chrono::steady_clock::now() < until) {
    io.restart();
    io.run_for(10ms);
  }
}

// Generation 0 planned for both nodes, their workers in training.
void start(JobCoordinator& coordinator, RecordingChannel& channel) {
  channel.joined = two_nodes();
  rendezvous::JobPlan plan = coordinator.plan(Generation{0}, two_nodes());
  ASSERT_TRUE(plan.refusal.empty()) << plan.refusal;
  EXPECT_EQ(plan.worker_master_addr, "10.0.0.1");
  EXPECT_GT(plan.worker_master_port, 0) << "worker_port auto: a free port picked on the master";
  EXPECT_GT(plan.init_deadline_s, 0);
}

// A coordinator of `settings` attached to a recording channel, generation 0 planned; what
// it ordered until then is forgotten.
struct PlannedJob {
  explicit PlannedJob(CoordinatorSettings settings = two_node_job()) : coordinator(io, std::move(settings)) {
    coordinator.attach(channel);
    start(coordinator, channel);
    channel.orders.clear();
  }
  ~PlannedJob() { coordinator.close(); }
  boost::asio::io_context io;
  JobCoordinator coordinator;
  RecordingChannel channel;
};

TEST(JobCoordinator, AnInitFailureRestartsEveryNodeAfterTheBackoffInOrder) {
  PlannedJob job;
  JobCoordinator& coordinator = job.coordinator;
  RecordingChannel& channel = job.channel;
  coordinator.on_message(1, messages::encode(Generation{0}, init_failure(1, 3)));
  EXPECT_FALSE(channel.find("broadcast restart")) << "not before the backoff";
  run_until(job.io, [&] { return channel.find("broadcast restart") != nullptr; });
  const std::vector<std::string> expected{"broadcast restart", "begin 1"};
  EXPECT_EQ(channel.whats(), expected);
  const auto restart = messages::kind_of(channel.find("broadcast restart")->message);
  ASSERT_TRUE(restart);
  EXPECT_EQ(*restart, messages::Kind::Restart);
  EXPECT_NE(channel.find("broadcast restart")->message.fields.at("reason").find("rank 3"), std::string::npos);
}

// When every node is ready already, the rendezvous server asks for the plan right after
// begin_generation returned (from the event loop, never inside the coordinator's own call): the
// restart is carried out whole first, so the nodes hear its order before anything of the next
// generation, and the plan is one call that returns the assignments.
TEST(JobCoordinator, APlanAskedForRightAfterBeginGenerationFollowsTheRestartOrder) {
  class PlanningChannel final : public RecordingChannel {
   public:
    explicit PlanningChannel(boost::asio::io_context& io) : io_(io) {}
    JobCoordinator* coordinator = nullptr;
    std::optional<rendezvous::JobPlan> plan;
    void begin_generation(Generation g) override {
      RecordingChannel::begin_generation(g);
      boost::asio::post(io_, [this, g] {
        plan = coordinator->plan(g, two_nodes());
        orders.push_back({"assignments " + to_string(g), {}});
      });
    }

   private:
    boost::asio::io_context& io_;
  };
  boost::asio::io_context io;
  JobCoordinator coordinator(io, two_node_job());
  PlanningChannel channel(io);
  channel.coordinator = &coordinator;
  coordinator.attach(channel);
  start(coordinator, channel);
  channel.orders.clear();
  coordinator.on_message(1, messages::encode(Generation{0}, init_failure(1, 3)));
  run_until(io, [&] { return channel.plan.has_value(); });
  ASSERT_TRUE(channel.plan) << ::testing::PrintToString(channel.whats());
  EXPECT_TRUE(channel.plan->refusal.empty()) << channel.plan->refusal;
  EXPECT_GT(channel.plan->worker_master_port, 0);
  const std::vector<std::string> expected{"broadcast restart", "begin 1", "assignments 1"};
  EXPECT_EQ(channel.whats(), expected);
  // Generation 1 runs: a failure of it is judged as generation 1's (the plan was taken whole).
  FailureReport again = init_failure(0, 0);
  coordinator.on_message(0, messages::encode(Generation{1}, again));
  run_until(io, [&] { return channel.find("begin 2") != nullptr; });
  EXPECT_TRUE(channel.find("begin 2")) << ::testing::PrintToString(channel.whats());
  coordinator.close();
}

TEST(JobCoordinator, ARuntimeFailureWithoutRestartsStopsEveryNodeNamingTheRank) {
  PlannedJob job;
  JobCoordinator& coordinator = job.coordinator;
  RecordingChannel& channel = job.channel;
  FailureReport runtime = init_failure(0, 1);
  runtime.failure.phase = FailurePhase::Runtime;
  runtime.failure.kind = FailureKind::Exited;
  runtime.failure.detail = "exited with 7";
  runtime.failure.status = ExitStatus{false, 7, 0, false};
  coordinator.on_message(0, messages::encode(Generation{0}, runtime));
  const auto* stop = channel.find("broadcast stop");
  ASSERT_TRUE(stop) << ::testing::PrintToString(channel.whats());
  EXPECT_NE(stop->message.fields.at("reason").find("rank 1"), std::string::npos) << stop->message.fields.at("reason");
  EXPECT_FALSE(channel.find("begin 1"));
}

// etcd: the restart that starts generation 1 waits until etcd confirmed the state written
// with it (this coordinator still leads), and nothing decided after it overtakes it.
TEST(JobCoordinator, UnderEtcdARestartWaitsForTheConfirmedStateWrite) {
  CoordinatorSettings s = two_node_job();
  std::vector<std::function<void()>> confirmations;
  int writes = 0;
  s.elected = true;
  s.save_state = [&](std::string state, std::function<void()> confirmed) {
    ++writes;
    EXPECT_FALSE(state.empty());
    if (confirmed) confirmations.push_back(std::move(confirmed));
  };
  PlannedJob job(s);
  JobCoordinator& coordinator = job.coordinator;
  RecordingChannel& channel = job.channel;
  coordinator.on_message(1, messages::encode(Generation{0}, init_failure(1, 2)));
  run_until(job.io, [&] { return !confirmations.empty(); });
  ASSERT_EQ(confirmations.size(), 1u) << "the restart's state write asks for etcd's confirmation";
  EXPECT_FALSE(channel.find("begin 1")) << "not before etcd confirmed";
  EXPECT_FALSE(channel.find("broadcast restart"));
  confirmations.front()();
  const std::vector<std::string> expected{"broadcast restart", "begin 1"};
  EXPECT_EQ(channel.whats(), expected);
  EXPECT_GE(writes, 2);
}

// `ddplaunch stacks`: one request to every node; the round ends when both answered, and
// its grouped text is what the next query gets.
TEST(JobCoordinator, AStacksQueryAsksEveryNodeAndAnswersWithTheGroupedStacks) {
  CoordinatorSettings s = two_node_job();
  s.config.token = "coordinator-test-token";  // a multi-node job answers `stacks` only with one
  PlannedJob job(s);
  JobCoordinator& coordinator = job.coordinator;
  RecordingChannel& channel = job.channel;
  // The ranks report training: the job is running.
  for (int node = 0; node < 2; ++node) {
    messages::RankStates states{"host" + std::to_string(node), {}};
    for (int local = 0; local < 2; ++local) {
      RankReport r;
      r.rank = node * 2 + local;
      r.pid = 100 + r.rank;
      r.phase = RankPhase::Running;
      r.init_entries = 1;
      states.ranks.push_back(r);
    }
    coordinator.on_message(node, messages::encode(Generation{0}, states));
  }
  channel.orders.clear();
  const std::string pending = coordinator.queries().answer("stacks");
  ASSERT_NE(pending.find("pending"), std::string::npos) << pending;
  const auto* ask = channel.find("broadcast collect_stacks");
  ASSERT_TRUE(ask) << ::testing::PrintToString(channel.whats());
  const auto request = messages::decode_collect_stacks(ask->message);
  ASSERT_TRUE(request);
  for (int node = 0; node < 2; ++node) {
    messages::RankStacksReply reply{request->request, "host" + std::to_string(node), {}};
    for (int local = 0; local < 2; ++local)
      reply.stacks.push_back(RankStack{node * 2 + local, node, "", 100, "python", "train_step ← main() at train.py:12"});
    EXPECT_NE(coordinator.queries().answer("stacks " + std::to_string(request->request)).find("pending"), std::string::npos);
    coordinator.on_message(node, messages::encode(Generation{0}, reply));
  }
  const std::string done = coordinator.queries().answer("stacks " + std::to_string(request->request));
  EXPECT_NE(done.find("done"), std::string::npos) << done;
  EXPECT_NE(done.find("train.py:12"), std::string::npos) << done;
  EXPECT_NE(done.find("0-3"), std::string::npos) << "the four ranks grouped by their identical stack: " << done;
}

// The fence on its own: what is said goes at once, effects wait behind an unconfirmed fenced
// batch in order, and a coordinator that stops acting carries out nothing it held.
TEST(FencedDecisions, EffectsWaitBehindTheFenceInOrderAndLogsGoAtOnce) {
  std::vector<std::string> carried, said;
  FencedDecisions fence(
      [&](const JobPolicy::Decisions& d) {
        for (const auto& x : d)
          if (auto* stop = std::get_if<decision::OrderStop>(&x)) carried.push_back(stop->reason);
      },
      [&](const decision::Log& log) { said.push_back(log.text); });
  EXPECT_TRUE(fence.idle());
  auto confirm_first = fence.hold({decision::Log{decision::Severity::Info, "first said"}, decision::OrderStop{1, 1, "first"}}, true);
  ASSERT_TRUE(confirm_first);
  auto second = fence.hold({decision::OrderStop{1, 1, "second"}, decision::Log{decision::Severity::Info, "second said"}}, false);
  EXPECT_FALSE(second) << "an unfenced batch needs no confirmation of its own";
  EXPECT_EQ(said, (std::vector<std::string>{"first said", "second said"}));
  EXPECT_TRUE(carried.empty());
  EXPECT_FALSE(fence.idle());
  confirm_first();
  EXPECT_EQ(carried, (std::vector<std::string>{"first", "second"}));
  EXPECT_TRUE(fence.idle());
  auto late = fence.hold({decision::OrderStop{2, 1, "third"}}, true);
  fence.clear();
  late();  // a confirmation after the coordinator stopped acting
  EXPECT_EQ(carried.size(), 2u);
}

}  // namespace
}  // namespace ddplaunch
