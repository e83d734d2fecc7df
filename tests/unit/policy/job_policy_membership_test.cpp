// JobPolicy in membership mode, driven by short event scripts: the orders that a
// spare's promotion, a bad node's exclusion, the wait for a launcher and an elastic start
// become. No sockets, timers or processes.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "policy/job_policy.h"
#include "policy_decisions.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;
using Decisions = JobPolicy::Decisions;
using testing::failure;
using testing::find;
using testing::logs;
const PolicyClock::time_point t0 = PolicyClock::time_point{} + 1000s;

rendezvous::NodeRecord launcher(int member_id, int node_rank) {
  rendezvous::NodeRecord n;
  n.member_id = member_id;
  n.node_rank = node_rank;
  n.facts.nproc = 1;
  n.facts.hostname = "host" + std::to_string(member_id);
  n.observed_address = "10.0.0." + std::to_string(member_id + 1);
  return n;
}

PolicySettings settings(int min_nodes, int max_nodes, int spares) {
  PolicySettings s;
  s.restart.init_restarts = 3;
  s.restart.backoff_s = 0;
  s.restart.jitter = 0;
  s.init_deadline.base_s = s.init_deadline.min_s = 10;
  s.init_deadline.per_node_s = s.init_deadline.rtt_factor = 0;
  s.worker_master_addr = "10.0.0.1";
  testing::enable_membership(s, min_nodes, max_nodes, spares);
  return s;
}

// The generation the policy plans, as the server would report it (slots from the members).
std::vector<rendezvous::NodeRecord> slots(const std::vector<int>& members) {
  std::vector<rendezvous::NodeRecord> out;
  for (std::size_t slot = 0; slot < members.size(); ++slot) out.push_back(launcher(members[slot], static_cast<int>(slot)));
  return out;
}

void start_running(JobPolicy& policy, Generation generation, const std::vector<int>& members) {
  policy.on_nodes_joined(generation, slots(members), t0);
  ASSERT_EQ(policy.phase(), JobPhase::Running);
}

// Members 0 and 1 in slots 0 and 1; generation 0 runs.
void join_two_then_run(JobPolicy& policy) {
  policy.on_member_joined(launcher(0, 0), t0);
  policy.on_member_joined(launcher(1, 1), t0);
  start_running(policy, Generation{0}, {0, 1});
}

// Members 0 and 1 in slots 0 and 1, member 2 a spare; generation 0 runs.
void join_two_and_a_spare_then_run(JobPolicy& policy) {
  policy.on_member_joined(launcher(0, 0), t0);
  policy.on_member_joined(launcher(1, 1), t0);
  policy.on_member_joined(launcher(2, -1), t0);
  start_running(policy, Generation{0}, {0, 1});
}

TEST(JobPolicyMembership, ASpareWaitsThenTakesTheLostNodesSlotWithoutSpendingTheBudget) {
  JobPolicy policy(settings(2, 2, 1));
  EXPECT_EQ(find<decision::BeginGeneration>(policy.on_member_joined(launcher(0, 0), t0)), nullptr);
  auto spare = policy.on_member_joined(launcher(2, 2), t0);  // asked for rank 2 of 2 nodes: a spare
  ASSERT_NE(find<decision::TellMember>(spare), nullptr);
  EXPECT_FALSE(find<decision::TellMember>(spare)->dismiss);
  auto start = policy.on_member_joined(launcher(1, 1), t0);
  ASSERT_NE(find<decision::BeginGeneration>(start), nullptr);
  EXPECT_EQ(find<decision::BeginGeneration>(start)->members, (std::vector<int>{0, 1}));
  start_running(policy, Generation{0}, {0, 1});

  auto lost = policy.on_member_lost(launcher(1, 1), "heartbeat timeout", t0 + 10s);
  const auto* restart = find<decision::OrderRestart>(lost);
  ASSERT_NE(restart, nullptr) << logs(lost);
  EXPECT_EQ(restart->generation, Generation{1});
  EXPECT_EQ(restart->members, (std::vector<int>{0, 2}));  // the spare in slot 1
  // Who must stop workers and rejoin is the policy's word (the server keeps no record of it):
  // the members of the last plan; the spare ran nothing and counts as rejoined at once.
  EXPECT_EQ(restart->ran_workers, (std::vector<int>{0, 1}));
  EXPECT_TRUE(find<decision::BeginGeneration>(start)->ran_workers.empty());
  EXPECT_FALSE(restart->hold);
  EXPECT_EQ(policy.budget().used(), 0);
  EXPECT_NE(logs(lost).find("node 1 (host1, 10.0.0.2) was lost: heartbeat timeout"), std::string::npos) << logs(lost);
  EXPECT_NE(policy.membership_table(t0 + 11s).find("lost"), std::string::npos);
}

TEST(JobPolicyMembership, InitFailuresStartingOnOneNodeTwiceExcludeItAndPromoteTheSpare) {
  JobPolicy policy(settings(2, 2, 1));
  join_two_and_a_spare_then_run(policy);
  const FailureReport report =
      failure(1, 1, FailurePhase::Init, FailureKind::InitFailed, 1, "NCCL error: unhandled system error");
  auto first = policy.on_worker_failed(1, Generation{0}, report, t0 + 1s);
  EXPECT_NE(find<decision::ScheduleRestart>(first), nullptr) << logs(first);  // the first time: an init restart
  policy.on_backoff_elapsed(Generation{1});
  start_running(policy, Generation{1}, {0, 1});
  auto second = policy.on_worker_failed(1, Generation{1}, report, t0 + 2s);
  const auto* dismissed = find<decision::TellMember>(second);
  ASSERT_NE(dismissed, nullptr) << logs(second);
  EXPECT_TRUE(dismissed->dismiss);
  EXPECT_EQ(dismissed->member_id, 1);
  EXPECT_NE(dismissed->text.find("node 1 (host host1) excluded after 2 init failures on its ranks"), std::string::npos)
      << dismissed->text;
  const auto* restart = find<decision::OrderRestart>(second);
  ASSERT_NE(restart, nullptr);
  EXPECT_EQ(restart->members, (std::vector<int>{0, 2}));
  EXPECT_EQ(policy.budget().used(), 1);  // the exclusion spent nothing
}

TEST(JobPolicyMembership, WithoutSparesTheNodesHoldUntilALauncherJoinsOrTheWaitEnds) {
  JobPolicy policy(settings(2, 2, 1));
  join_two_then_run(policy);
  auto lost = policy.on_member_lost(launcher(1, 1), "connection closed", t0 + 1s);
  const auto* hold = find<decision::OrderRestart>(lost);
  ASSERT_NE(hold, nullptr) << logs(lost);
  EXPECT_TRUE(hold->hold);
  EXPECT_NE(logs(lost).find("waiting up to 30 s for a launcher to join"), std::string::npos) << logs(lost);
  auto back = policy.on_member_joined(launcher(3, 1), t0 + 5s);  // the node's launcher, restarted
  const auto* restart = find<decision::OrderRestart>(back);
  ASSERT_NE(restart, nullptr) << logs(back);
  EXPECT_FALSE(restart->hold);
  EXPECT_EQ(restart->members, (std::vector<int>{0, 3}));
  start_running(policy, restart->generation, {0, 3});

  auto lost_again = policy.on_member_lost(launcher(3, 1), "connection closed", t0 + 10s);
  ASSERT_NE(find<decision::OrderRestart>(lost_again), nullptr);
  auto gave_up = policy.on_tick(t0 + 41s);
  ASSERT_NE(find<decision::OrderStop>(gave_up), nullptr) << logs(gave_up);
  EXPECT_NE(logs(gave_up).find("no launcher joined within 30 s"), std::string::npos) << logs(gave_up);
}

TEST(JobPolicyMembership, AnElasticJobStartsWithMinNodesAfterTheLastCall) {
  JobPolicy policy(settings(2, 4, 0));
  policy.on_member_joined(launcher(0, 0), t0);
  policy.on_member_joined(launcher(1, -1), t0 + 1s);
  EXPECT_EQ(find<decision::BeginGeneration>(policy.on_tick(t0 + 3s)), nullptr);  // the last call runs
  auto start = policy.on_tick(t0 + 7s);
  ASSERT_NE(find<decision::BeginGeneration>(start), nullptr) << logs(start);
  EXPECT_EQ(find<decision::BeginGeneration>(start)->members, (std::vector<int>{0, 1}));
  EXPECT_NE(logs(start).find("2 of up to 4 nodes joined and the last call (5 s) is over"), std::string::npos);
}

TEST(JobPolicyMembership, ARankThatFailedAsItsPeerWasLostDoesNotStopAJobThatCanBeRepaired) {
  JobPolicy policy(settings(2, 2, 1));
  join_two_and_a_spare_then_run(policy);
  // rank 0's all_reduce broke: its peer on node 1 vanished
  const FailureReport report =
      failure(0, 0, FailurePhase::Runtime, FailureKind::Exited, 1, "exit code 1: Connection reset by peer");
  auto failed = policy.on_worker_failed(0, Generation{0}, report, t0 + 1s);
  ASSERT_NE(find<decision::OrderStop>(failed), nullptr) << logs(failed);  // no --max-restarts: stop
  auto lost = policy.on_member_lost(launcher(1, 1), "heartbeat timeout", t0 + 2s);
  const auto* restart = find<decision::OrderRestart>(lost);
  ASSERT_NE(restart, nullptr) << logs(lost);
  EXPECT_EQ(restart->members, (std::vector<int>{0, 2}));
  EXPECT_NE(logs(lost).find("repairing the membership instead of stopping the job"), std::string::npos) << logs(lost);
}

TEST(JobPolicyMembership, ALateLauncherWhoseFactsDifferIsTurnedAwayBeforeItTakesASlot) {
  PolicySettings s = settings(2, 2, 1);
  s.refuse_version_mismatch = true;
  JobPolicy policy(s);
  policy.on_member_joined(launcher(0, 0), t0);
  policy.on_member_joined(launcher(1, 1), t0);
  auto running = slots({0, 1});
  for (auto& n : running) n.facts.program_fingerprint = "abc";
  policy.on_nodes_joined(Generation{0}, running, t0);
  rendezvous::NodeRecord other = launcher(2, -1);
  other.facts.program_fingerprint = "def";  // another build of the training program
  auto joined = policy.on_member_joined(other, t0 + 1s);
  const auto* dismissed = find<decision::TellMember>(joined);
  ASSERT_NE(dismissed, nullptr) << logs(joined);
  EXPECT_TRUE(dismissed->dismiss);
  EXPECT_NE(dismissed->text.find("cannot join the running job"), std::string::npos) << dismissed->text;
  EXPECT_NE(dismissed->text.find("program fingerprint 'def'"), std::string::npos) << dismissed->text;
  // And it is no spare: a later loss has nothing to promote (the job holds, waiting).
  auto lost = policy.on_member_lost(launcher(1, 1), "connection closed", t0 + 2s);
  ASSERT_NE(find<decision::OrderRestart>(lost), nullptr);
  EXPECT_TRUE(find<decision::OrderRestart>(lost)->hold);
}

// torchrun's rendezvous: an elastic job's join timeout bounds reaching MIN, not MAX. With MIN
// here (the last call running), the timeout is no error and the last call starts the job.
TEST(JobPolicyMembership, AJoinTimeoutWithMinNodesHereIsNoErrorAndTheLastCallStarts) {
  JobPolicy policy(settings(1, 2, 0));
  policy.on_member_joined(launcher(0, -1), t0);
  auto timeout = policy.on_join_timeout("join timeout: after 3 s only 1 of 2 nodes have joined", false);
  EXPECT_EQ(find<decision::AbortJoin>(timeout), nullptr) << logs(timeout);
  EXPECT_NE(policy.phase(), JobPhase::Ended);
  auto start = policy.on_tick(t0 + 6s);  // the last call (5 s) is over
  ASSERT_NE(find<decision::BeginGeneration>(start), nullptr) << logs(start);
  EXPECT_EQ(find<decision::BeginGeneration>(start)->members, (std::vector<int>{0}));
}

TEST(JobPolicyMembership, AJoinTimeoutBelowMinStillAbortsTheWait) {
  JobPolicy policy(settings(2, 3, 0));
  policy.on_member_joined(launcher(0, -1), t0);
  auto timeout = policy.on_join_timeout("join timeout: after 3 s only 1 of 3 nodes have joined", false);
  EXPECT_NE(find<decision::AbortJoin>(timeout), nullptr);
  EXPECT_EQ(policy.phase(), JobPhase::Ended);
}

// etcd: a coordinator elected after the last one was lost starts membership over:
// every launcher joins again, the budget spent so far stays, and the next generation is the
// one after the last coordinator's.
TEST(JobPolicyMembership, AMovedCoordinatorStartsTheNextGenerationWhenTheLaunchersJoinAgain) {
  JobPolicy policy(settings(2, 2, 1));
  join_two_and_a_spare_then_run(policy);
  // One init failure spent a restart of generation 0; generation 1 runs.
  auto failed = policy.on_worker_failed(1, Generation{0}, testing::failure(1, 1), t0 + 1s);
  ASSERT_NE(find<decision::ScheduleRestart>(failed), nullptr) << logs(failed);
  policy.on_backoff_elapsed(Generation{1});
  start_running(policy, Generation{1}, {0, 1});
  ASSERT_EQ(policy.budget().used(), 1);

  auto moved = policy.on_coordinator_moved();
  EXPECT_EQ(policy.phase(), JobPhase::Joining);
  EXPECT_NE(logs(moved).find("took over as the job's coordinator after generation 1 (restarts used: 1 of"),
            std::string::npos) << logs(moved);
  // The spare (member 2) and member 1 come back as new connections (ids 10, 11), asking for
  // their slots; member 0's launcher was the lost coordinator and never comes back.
  EXPECT_EQ(find<decision::BeginGeneration>(policy.on_member_joined(launcher(11, 1), t0 + 5s)), nullptr);
  auto start = policy.on_member_joined(launcher(10, -1), t0 + 5s);
  const auto* begin = find<decision::BeginGeneration>(start);
  ASSERT_NE(begin, nullptr) << logs(start);
  EXPECT_EQ(begin->generation, Generation{2});
  EXPECT_EQ(begin->members.size(), 2u);
  EXPECT_EQ(begin->members[1], 11);  // back in its slot
  EXPECT_TRUE(begin->ran_workers.empty());  // none of them ran workers for this coordinator
  start_running(policy, Generation{2}, {10, 11});
  EXPECT_EQ(policy.generation(), Generation{2});
  EXPECT_EQ(policy.budget().used(), 1);  // the move spent nothing
}

TEST(JobPolicyMembership, AMovedCoordinatorOfAnEndedJobDismissesWhoeverJoins) {
  JobPolicy policy(settings(2, 2, 0));
  join_two_then_run(policy);
  policy.on_node_finished(0, Generation{0}, 0);
  policy.on_node_finished(1, Generation{0}, 0);
  ASSERT_EQ(policy.phase(), JobPhase::Ended);
  policy.on_coordinator_moved();
  auto told = policy.on_member_joined(launcher(5, 1), t0 + 5s);
  const auto* tell = find<decision::TellMember>(told);
  ASSERT_NE(tell, nullptr);
  EXPECT_TRUE(tell->dismiss);
  EXPECT_NE(tell->text.find("already ended"), std::string::npos);
}

TEST(JobPolicyMembership, AHostWithARecordIsNamedWhenItJoinsAndKeptAsTheSpare) {
  PolicySettings s = settings(2, 2, 1);
  s.troubled_hosts["host1"] = "host host1 failed ranks in 2 of the last 10 runs";
  s.membership_settings.reserve_hosts = {"host1"};
  JobPolicy policy(s);
  policy.on_member_joined(launcher(0, 0), t0);
  auto lemon = policy.on_member_joined(launcher(1, -1), t0);
  EXPECT_NE(logs(lemon).find("host host1 failed ranks in 2 of the last 10 runs: it is kept as a spare"),
            std::string::npos)
      << logs(lemon);
  EXPECT_EQ(find<decision::BeginGeneration>(lemon), nullptr);
  auto start = policy.on_member_joined(launcher(2, -1), t0 + 1s);
  const auto* begin = find<decision::BeginGeneration>(start);
  ASSERT_NE(begin, nullptr) << logs(start);
  EXPECT_EQ(begin->members, (std::vector<int>{0, 2}));
  EXPECT_EQ(logs(start).find("host1"), std::string::npos) << logs(start);  // another host: nothing said
}

TEST(JobPolicyMembership, WithoutSparesAHostWithARecordIsNamedAndTakesPart) {
  PolicySettings s = settings(2, 2, 0);
  s.membership = false;
  s.troubled_hosts["host1"] = "host host1 was a straggler in 3 of the last 10 runs";
  JobPolicy policy(s);
  auto joined = policy.on_nodes_joined(Generation{0}, slots({0, 1}), t0);
  EXPECT_NE(logs(joined).find("host host1 was a straggler in 3 of the last 10 runs: it takes part as node 1 (with "
                              "--spares, it would be kept in reserve as the spare)"),
            std::string::npos)
      << logs(joined);
}

// Two nodes, `spares` spares, and a straggler's node swapped once it held the job back 60 s.
PolicySettings swapping_stragglers(int spares) {
  PolicySettings s = settings(2, 2, spares);
  s.straggler_action = StragglerAction::RestartWithout;
  s.straggler_swap_after_s = 60;
  return s;
}

TEST(JobPolicyMembership, RestartWithoutSwapsAPersistentStragglersNodeForTheSpareOnce) {
  JobPolicy policy(swapping_stragglers(1));
  join_two_and_a_spare_then_run(policy);
  EXPECT_TRUE(policy.on_persistent_straggler(1, 1, 59, "computes 1.8x", t0 + 70s).empty());  // not yet
  auto swap = policy.on_persistent_straggler(1, 1, 61, "computes 1.8x the median", t0 + 71s);
  const auto* restart = find<decision::OrderRestart>(swap);
  ASSERT_NE(restart, nullptr) << logs(swap);
  EXPECT_EQ(restart->members, (std::vector<int>{0, 2}));
  const auto* dismissed = find<decision::TellMember>(swap);
  ASSERT_NE(dismissed, nullptr);
  EXPECT_TRUE(dismissed->dismiss);
  EXPECT_NE(dismissed->text.find("node 1 (host host1) swapped out: rank 1 held the job back as a straggler for 61 s"),
            std::string::npos)
      << dismissed->text;
  EXPECT_EQ(policy.budget().used(), 0);  // a membership change, no restart spent
  EXPECT_TRUE(policy.on_persistent_straggler(1, 1, 62, "computes 1.8x", t0 + 72s).empty());
}

TEST(JobPolicyMembership, RestartWithoutNeverSwapsWhileAPersonHoldsARankInADebugger) {
  JobPolicy policy(swapping_stragglers(1));
  join_two_and_a_spare_then_run(policy);
  RankReport held;
  held.rank = 0;
  held.phase = RankPhase::Running;
  held.state = std::string(RankReport::kDebuggingState);
  policy.on_ranks_reported(0, Generation{0}, {held}, t0 + 60s);
  EXPECT_TRUE(policy.on_persistent_straggler(1, 1, 61, "computes 1.8x", t0 + 61s).empty());
  held.state = "running";
  policy.on_ranks_reported(0, Generation{0}, {held}, t0 + 62s);
  EXPECT_NE(find<decision::OrderRestart>(policy.on_persistent_straggler(1, 1, 63, "computes 1.8x", t0 + 63s)), nullptr);
}

TEST(JobPolicyMembership, RestartWithoutASpareOrInReportModeOnlySaysSo) {
  JobPolicy policy(swapping_stragglers(0));
  join_two_then_run(policy);
  auto said = policy.on_persistent_straggler(1, 1, 61, "computes 1.8x", t0 + 70s);
  EXPECT_EQ(find<decision::OrderRestart>(said), nullptr);
  EXPECT_NE(logs(said).find("no spare to take node 1's place, so the job goes on at its pace: start launchers with "
                            "--spares"),
            std::string::npos)
      << logs(said);
  EXPECT_TRUE(policy.on_persistent_straggler(1, 1, 90, "computes 1.8x", t0 + 99s).empty());  // said once

  JobPolicy reporting(settings(2, 2, 1));
  join_two_and_a_spare_then_run(reporting);
  EXPECT_TRUE(reporting.on_persistent_straggler(1, 1, 1000, "computes 1.8x", t0 + 70s).empty());
}

TEST(JobPolicyMembership, AHostWithARecordThatRunsTheMasterTakesPartAndIsNamedOnce) {
  PolicySettings s = settings(3, 3, 1);
  s.troubled_hosts["one-box"] = "host one-box failed ranks in 2 of the last 10 runs";
  s.membership_settings.reserve_hosts = {"one-box"};
  JobPolicy policy(s);
  Decisions all;
  for (int id = 0; id < 4; ++id) {  // one machine's loopback job: every launcher on one host
    rendezvous::NodeRecord r = launcher(id, id);
    r.facts.hostname = "one-box";
    const Decisions d = policy.on_member_joined(r, t0);
    all.insert(all.end(), d.begin(), d.end());
  }
  const std::string said = logs(all);
  EXPECT_NE(said.find("host one-box failed ranks in 2 of the last 10 runs: it takes part: the master runs there"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find("one-box failed", said.find("one-box failed") + 1), std::string::npos) << said;  // once
  const auto* begin = find<decision::BeginGeneration>(all);
  ASSERT_NE(begin, nullptr) << said;
  EXPECT_EQ(begin->members, (std::vector<int>{0, 1, 2}));  // nobody kept back: the host takes part anyway
}

}  // namespace
}  // namespace ddplaunch
