// InitProgress driven directly: "every rank finished init" said once per generation with its
// times, and who the ranks in init wait for, at a bounded rate. Pure.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "policy/init_progress.h"
#include "policy_decisions.h"

namespace {

using namespace ddplaunch;
using namespace std::chrono_literals;
using ddplaunch::testing::rank;
const PolicyClock::time_point t0 = PolicyClock::time_point{} + 1000s;

TEST(InitProgress, EveryRankFinishingInitIsSaidOnceWithItsTimes) {
  InitTracker tracker;
  tracker.reset({0, 1}, t0);
  InitProgress progress;
  progress.begin(t0);
  tracker.update(0, rank(0, RankPhase::Init, 1), t0 + 2s);
  tracker.update(1, rank(1, RankPhase::Init, 1), t0 + 4s);
  tracker.update(0, rank(0, RankPhase::Running, 1), t0 + 5s);
  EXPECT_FALSE(progress.announce_init_done(tracker, Generation{3}, t0 + 5s));  // rank 1 is still in init
  EXPECT_FALSE(progress.init_seconds());
  tracker.update(1, rank(1, RankPhase::Running, 1), t0 + 6s);
  auto said = progress.announce_init_done(tracker, Generation{3}, t0 + 6s);
  ASSERT_TRUE(said);
  EXPECT_EQ(*said, "generation 3: all 2 ranks finished init (init_ok) 6.00 s after the start (2.00 s of init after "
                   "the last rank entered it)");
  EXPECT_DOUBLE_EQ(*progress.init_seconds(), 2.0);
  EXPECT_FALSE(progress.announce_init_done(tracker, Generation{3}, t0 + 7s));  // once
  progress.forget_announcement();
  EXPECT_TRUE(progress.announce_init_done(tracker, Generation{3}, t0 + 8s));
}

// The interval counts from the generation's start too: the first report comes once both passed.
TEST(InitProgress, TheWaitIsReportedAfterTheFirstDelayThenAtMostEveryInterval) {
  InitTracker tracker;
  tracker.reset({0, 1}, t0);
  InitProgress progress;
  progress.begin(t0);
  tracker.update(0, rank(0, RankPhase::Init, 1), t0 + 1s);  // rank 1 still in setup
  EXPECT_FALSE(progress.wait_report(tracker, t0 + 5s, 10s, 5s));  // waited 4 s of 10
  EXPECT_FALSE(progress.wait_report(tracker, t0 + 11s, 10s, 30s));  // 11 s since the start, of 30
  auto said = progress.wait_report(tracker, t0 + 31s, 10s, 30s);
  ASSERT_TRUE(said);
  EXPECT_NE(said->find("1 rank(s) wait in init for rank 1 (node 1), still in setup after"), std::string::npos) << *said;
  EXPECT_FALSE(progress.wait_report(tracker, t0 + 50s, 10s, 30s));
  EXPECT_TRUE(progress.wait_report(tracker, t0 + 61s, 10s, 30s));
  tracker.update(1, rank(1, RankPhase::Init, 1), t0 + 62s);  // nobody waits any more
  EXPECT_FALSE(progress.wait_report(tracker, t0 + 120s, 10s, 30s));
}

// The init rules look at every rank, so they run again only when a report moved what they read:
// a rank's phase, its init round, its debugger. A steady rank's periodic report moves nothing.
TEST(InitTracker, OnlyAReportThatMovesAPhaseAnInitRoundOrADebuggerCountsAsMoved) {
  InitTracker tracker;
  tracker.reset({0, 1}, t0);
  EXPECT_FALSE(tracker.update(1, rank(0, RankPhase::Init, 1), t0).held) << "node 1 does not hold rank 0";
  EXPECT_TRUE(tracker.update(0, rank(0, RankPhase::Init, 1), t0 + 1s).moved);
  EXPECT_TRUE(tracker.update(0, rank(0, RankPhase::Running, 1), t0 + 2s).moved);
  RankReport steady = rank(0, RankPhase::Running, 1);
  steady.steps = 500;
  const InitTracker::Applied again = tracker.update(0, steady, t0 + 3s);
  EXPECT_TRUE(again.held);
  EXPECT_FALSE(again.moved) << "more steps move nothing the init rules read";
  steady.state = std::string(RankReport::kDebuggingState);
  EXPECT_TRUE(tracker.update(0, steady, t0 + 4s).moved) << "a rank stopped in a debugger suspends the deadline";
  EXPECT_TRUE(tracker.update(0, rank(0, RankPhase::Init, 2), t0 + 5s).moved) << "a new init round";
}

}  // namespace
