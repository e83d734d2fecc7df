// The job policy's state document (etcd failover): a coordinator that takes over
// from a saved state must decide exactly what the old one would have. Each story
// (policy_stories.h) is played with the failover after every step of it (every phase of the
// job, mid restart, mid membership change), on a machine whose clock reads differently; both
// policies must then decide the same things and end in the same state.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/job_policy.h"
#include "policy/policy_state.h"
#include "policy_decisions.h"
#include "policy_stories.h"

namespace ddplaunch {
namespace {

using namespace testing;
using Json = nlohmann::json;

// The failover after each step of `script` (and before the first): the policy is saved, a copy
// restored on a machine whose clock reads `shift` more, and both play the rest of the script
// (the copy at its own clock's times). Both must decide the same, and end in the same state.
// Returns the phases the job was in at the failovers.
std::set<JobPhase> expect_failover_invisible(const PolicySettings& s, const Script& script) {
  std::set<JobPhase> phases;
  for (PolicyClock::duration shift : {PolicyClock::duration(5s), PolicyClock::duration(-3s)}) {
    for (std::size_t cut = 0; cut <= script.size(); ++cut) {
      const std::string after = cut == 0 ? "nothing" : "'" + script[cut - 1].what + "'";
      SCOPED_TRACE("failover after " + after + ", the new clock " + std::to_string(shift.count() / 1'000'000) + " ms ahead");
      JobPolicy original(s);
      play(original, script, 0, cut);
      phases.insert(original.phase());
      const TimePoint saved_at = t0 + (cut == 0 ? 0s : script[cut - 1].at);
      const std::string saved = original.save_state(saved_at);
      auto restored = JobPolicy::restore_state(s, saved, saved_at + shift);
      if (!restored) {
        ADD_FAILURE() << restored.error;
        continue;
      }
      JobPolicy copy = restored->policy;
      EXPECT_EQ(copy.save_state(saved_at + shift), saved) << "saved, restored and saved again differs";
      const auto without = play(original, script, cut, script.size());
      const auto with = play(copy, script, cut, script.size(), shift);
      EXPECT_EQ(joined(with), joined(without));
      const TimePoint end = t0 + script.back().at + 1s;
      EXPECT_EQ(copy.save_state(end + shift), original.save_state(end)) << "the states differ at the end";
    }
  }
  return phases;
}

// ---- the property: a failover anywhere changes nothing ----------------------------------------

// The story played whole, without a failover, is what it says: each of `decided` among its
// decisions ("step: decision" as play() writes them), none of `not_decided` (a step too early).
std::vector<std::string> expect_story(JobPolicy policy, const Script& script, const std::vector<std::string>& decided,
                                      const std::vector<std::string>& not_decided = {}) {
  const auto all = play(policy, script, 0, script.size());
  for (const auto& text : decided) EXPECT_TRUE(has(all, text)) << text << " not in:\n" << joined(all);
  for (const auto& text : not_decided) EXPECT_FALSE(has(all, text)) << text << " in:\n" << joined(all);
  return all;
}

TEST(PolicyState, FailoverAnywhereInRestartsAndAStopChangesNoDecision) {
  const Script script = restarts_then_stop();
  expect_story(JobPolicy(settings()), script,
               {"the wait is reported: Log{info, 3 rank(s) wait in init for rank 3 (node 1)",
                "ArmInitDeadline{0, serial 1, 10 s}", "the init deadline passes: ScheduleRestart{1, 1.",
                "all 4 ranks finished init", "fails while running: ScheduleRestart{2, 2.", "OrderStop{2, exit 7",
                "note: a worker's c10d TCPStore client", "EndJob{exit 7}"},
               {"the wait is not reported yet:"});
  const auto phases = expect_failover_invisible(settings(), script);
  EXPECT_EQ(phases, (std::set<JobPhase>{JobPhase::Joining, JobPhase::Running, JobPhase::RestartPending,
                                        JobPhase::Rejoining, JobPhase::Stopping, JobPhase::Ended}));
}

TEST(PolicyState, FailoverKeepsTheRememberedFailureSoARepeatStillStops) {
  PolicySettings s = settings();
  s.restart.init_restarts = 3;
  s.restart.max_restarts = 0;
  expect_story(JobPolicy(s), deterministic_init_failure(),
               {"fails init the same way: Log{error, not restarting: rank 2 failed with the same error during init in "
                "generations 0 and 1",
                "EndJob{exit 1}"});
  expect_failover_invisible(s, deterministic_init_failure());
}

TEST(PolicyState, FailoverAfterAHangChangesNoDecision) {
  expect_story(JobPolicy(hang_settings()), hang_restarts(),
               {"rank 1 hangs: ScheduleRestart{1,", "no budget left: OrderStop{1,"});
  expect_failover_invisible(hang_settings(), hang_restarts());
}

TEST(PolicyState, FailoverMidMembershipChangesChangesNoDecision) {
  const PolicySettings s = membership_settings(2, 2, 1);
  expect_story(JobPolicy(s), spare_replaces_then_wait_below_min(),
               {"the spare takes slot 1: OrderRestart{1, node 1 (host host1) was lost: heartbeat timeout; the spare on "
                "host host2 takes node rank 1",
                "excluded, member 3 promoted: TellMember{2,",
                "in its cooldown: TellMember{4, host host2 was excluded from this job; it may join again in 10 s",
                "the job waits: OrderRestart{4,", "hold true}",
                "fills the gap: OrderRestart{5, host2 joined and takes node rank 1, members [0, 5]", "EndJob{exit 0}"},
               {"still waiting:"});
  expect_failover_invisible(s, spare_replaces_then_wait_below_min());
}

// A failover within the last call or the wait below MIN, the new machine's clock elsewhere:
// the deadline is the same distance ahead, so the ticks before it still do nothing.
TEST(PolicyState, FailoverDuringTheLastCallAndTheWaitBelowMinKeepsTheirDeadlines) {
  const PolicySettings s = membership_settings(2, 3, 0);
  expect_story(JobPolicy(s), elastic_last_call_then_below_min(),
               {"the job starts: BeginGeneration{0, members [0, 1]", "the job grows: OrderRestart{1,",
                "the job shrinks: OrderRestart{2,", "the job stops: OrderStop{3,"},
               {"the last call is not over:", "the wait is not over:"});
  expect_failover_invisible(s, elastic_last_call_then_below_min());
}

TEST(PolicyState, FailoverDuringAPeerProbeRoundAndDoctorChangesNoDecision) {
  expect_story(JobPolicy(doctor_settings()), doctor_with_a_probe(),
               {"the links in: StartWorkers{0, ifname 'eth0'}", "the table: PrintTable{",
                "0 -> 1    eth0       0.25 ms    942 Mbit/s",  // node 0's link, measured before the failover
                "the table: EndJob{exit 1}"},
               {"the round is not overdue:"});
  expect_failover_invisible(doctor_settings(), doctor_with_a_probe());
}

// ---- the document itself ----------------------------------------------------------------------

TEST(PolicyState, SavedRestoredAndSavedAgainIsTheSameDocument) {
  JobPolicy policy = policy_mid_membership_restart();
  const std::string saved = policy.save_state(t0 + 30s);
  auto restored = JobPolicy::restore_state(membership_settings(2, 2, 1), saved, t0 + 1h);
  ASSERT_TRUE(restored) << restored.error;
  EXPECT_EQ(restored->policy.save_state(t0 + 1h), saved);
  EXPECT_EQ(restored->policy.membership_table(t0 + 1h + 5s), policy.membership_table(t0 + 35s));
}

TEST(PolicyState, TimesAreSavedAsMillisecondsFromTheSaveAndReBasedAtTheRestore) {
  JobPolicy policy(settings());
  policy.on_nodes_joined(Generation{0}, nodes(2), t0);
  const Json saved = Json::parse(policy.save_state(t0 + 3500ms));
  EXPECT_EQ(saved["generation_started"], -3500);
  EXPECT_EQ(saved["tracker"]["ranks"][0]["since"], -3500);
  EXPECT_TRUE(saved["tracker"]["ranks"][0]["entered_init"].is_null());
  EXPECT_EQ(saved["version"], kPolicyStateVersion);
  EXPECT_EQ(saved["settings"], "init_restarts 1, max_restarts 1, membership off");
}

// The master's hang watch's learnt step interval travels with the state (the new coordinator
// seeds its own hang watch with it); the policy neither holds it nor decides by it.
TEST(PolicyState, TheLearntStepIntervalTravelsWithTheState) {
  JobPolicy policy(settings());
  policy.on_nodes_joined(Generation{0}, nodes(2), t0);
  EXPECT_EQ(Json::parse(policy.save_state(t0 + 1s))["learnt_step_interval_s"], 0) << "none carried: none saved";
  const std::string saved = policy.save_state(t0 + 1s, CarriedState{0.42});
  EXPECT_EQ(Json::parse(saved)["learnt_step_interval_s"], 0.42);
  auto restored = JobPolicy::restore_state(settings(), saved, t0 + 5s);
  ASSERT_TRUE(restored) << restored.error;
  EXPECT_EQ(restored->carried.learnt_step_interval_s, 0.42);
  EXPECT_EQ(restored->policy.save_state(t0 + 5s, restored->carried), saved);
  Json negative = Json::parse(saved);
  negative["learnt_step_interval_s"] = "slow";
  EXPECT_FALSE(JobPolicy::restore_state(settings(), negative.dump(), t0 + 5s));
}

TEST(PolicyState, TextThatIsNotUtf8ComesBackByteForByte) {
  PolicySettings s = settings();
  s.restart.init_restarts = s.restart.max_restarts = 0;
  JobPolicy policy(s);
  policy.on_nodes_joined(Generation{0}, nodes(2), t0);
  FailureReport report = failure(1, 2, FailurePhase::Runtime);
  report.failure.tail = {"binary \xff\xfe garbage", "\xc3(", "fine"};
  ASSERT_TRUE(has(play(policy, {{"rank 2 fails", 1s, [&](JobPolicy& p, TimePoint t) { return p.on_worker_failed(1, Generation{0}, report, t); }}}, 0, 1),
                  "OrderStop"));
  const std::string saved = policy.save_state(t0 + 2s);
  EXPECT_NE(saved.find(R"({"hex":"62696e61727920fffe2067617262616765"})"), std::string::npos) << saved;
  auto restored = JobPolicy::restore_state(s, saved, t0 + 2s);
  ASSERT_TRUE(restored) << restored.error;
  EXPECT_EQ(restored->policy.save_state(t0 + 2s), saved);
  // The root cause quotes the failed rank's last lines: the same bytes after the failover.
  const Script end = {
      {"node 0 finished", 3s, [](JobPolicy& p, TimePoint) { return p.on_node_finished(0, Generation{0}, 3); }},
      {"node 1 finished", 3s, [](JobPolicy& p, TimePoint) { return p.on_node_finished(1, Generation{0}, 3); }},
  };
  JobPolicy copy = restored->policy;
  const auto without = play(policy, end, 0, end.size());
  EXPECT_TRUE(has(without, "binary \xff\xfe garbage")) << joined(without);
  EXPECT_EQ(play(copy, end, 0, end.size()), without);
}

}  // namespace
}  // namespace ddplaunch
