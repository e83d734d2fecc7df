// The job's time account from its timeline: time to start, the time each restart lost, time
// held in a debugger, hangs, and the share of wall time every rank trained.
#include "timeline/time_account.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "timeline/rank_transitions.h"

namespace ddplaunch::timeline {
namespace {

constexpr std::int64_t kSecond = 1000000;

// A timeline written the way the master records one: seconds on the master's clock.
struct Story {
  std::vector<Event> events;

  // One event at `at_s` on a lane: the job's (node kJobLane), a node's, or a rank's.
  Event& add(std::uint64_t g, double at_s, int node, int rank, EventType type, std::string name, std::string category) {
    Event e;
    e.at_us = us(at_s);
    e.generation = Generation{g};
    e.node = node;
    e.rank = rank;
    e.type = type;
    e.name = std::move(name);
    e.category = std::move(category);
    return events.emplace_back(std::move(e));
  }
  void generation(std::uint64_t g, double at_s) {
    add(g, at_s, kJobLane, kNodeLane, EventType::State, "generation " + std::to_string(g), "generation");
  }
  void rank(std::uint64_t g, int node, int rank, const std::string& state, double at_s) {
    add(g, at_s, node, rank, EventType::State, state, "");
  }
  void first_step(std::uint64_t g, int node, int rank, double at_s) {
    add(g, at_s, node, rank, EventType::Instant, kFirstStepName, kProgressCategory);
  }
  void instant(std::uint64_t g, const std::string& category, double at_s, int node = kJobLane, int rank = kNodeLane) {
    add(g, at_s, node, rank, EventType::Instant, category, category);
  }
  static std::int64_t us(double s) { return static_cast<std::int64_t>(s * kSecond); }
};

TEST(TimeAccount, AHealthyJobTrainsFromItsLastRanksFirstStepToItsFirstExit) {
  Story s;
  s.generation(0, 0);
  for (int r = 0; r < 2; ++r) {
    s.rank(0, r, r, "setup", 0.1);
    s.rank(0, r, r, "init", 1);
    s.rank(0, r, r, "running", 3);
  }
  s.first_step(0, 0, 0, 4);
  s.first_step(0, 1, 1, 5);  // every rank training from 5 s
  s.rank(0, 0, 0, "exited:0", 95);
  s.rank(0, 1, 1, "exited:0", 96);
  const auto a = account_time(s.events, Story::us(100));
  EXPECT_EQ(a.wall_us, 100 * kSecond);
  ASSERT_TRUE(a.to_start_us);
  EXPECT_EQ(*a.to_start_us, 5 * kSecond);
  EXPECT_TRUE(a.restarts.empty());
  EXPECT_EQ(a.training_us, 90 * kSecond);
  EXPECT_NEAR(a.effective_share(), 0.9, 1e-9);
  EXPECT_TRUE(a.progress_seen);
}

TEST(TimeAccount, ARestartLosesTheTimeFromTheFailureToEveryRankTrainingAgain) {
  Story s;
  s.generation(0, 0);
  s.rank(0, 0, 0, "running", 2);
  s.rank(0, 1, 1, "running", 2);
  s.first_step(0, 0, 0, 3);
  s.first_step(0, 1, 1, 4);
  s.rank(0, 1, 1, "exited:1", 30);
  s.instant(0, "failure", 30, 1, 1);
  s.instant(1, "restart", 31);  // the order carries the generation it starts
  s.generation(1, 32);
  s.rank(1, 0, 0, "running", 35);
  s.rank(1, 1, 1, "running", 35);
  s.first_step(1, 0, 0, 38);
  s.first_step(1, 1, 1, 40);
  const auto a = account_time(s.events, Story::us(100));
  ASSERT_EQ(a.restarts.size(), 1u);
  EXPECT_EQ(a.restarts[0].failed_in, Generation{0});
  EXPECT_EQ(a.restarts[0].failed_at_us, 30 * kSecond);
  EXPECT_EQ(a.restarts[0].lost_us, 10 * kSecond);  // 30 s → 40 s
  EXPECT_TRUE(a.restarts[0].recovered);
  EXPECT_EQ(a.training_us, (30 - 4 + 100 - 40) * kSecond);
  // The parts add up: what is not training is start, the restart's loss, the tail after it.
  EXPECT_EQ(a.wall_us - a.training_us, *a.to_start_us + a.restarts[0].lost_us);
}

TEST(TimeAccount, DebuggerHoldsAndHangsAreNotTraining) {
  Story s;
  s.generation(0, 0);
  s.rank(0, 0, 0, "running", 1);
  s.rank(0, 1, 1, "running", 1);
  s.first_step(0, 0, 0, 2);
  s.first_step(0, 1, 1, 2);
  s.rank(0, 1, 1, "debugging", 10);  // a person at a breakpoint for 20 s
  s.rank(0, 1, 1, "running", 30);
  s.instant(0, "hang", 60);           // a stack round; the job restarts at 70 s
  s.instant(1, "restart", 70);
  s.generation(1, 70);
  const auto a = account_time(s.events, Story::us(80));
  EXPECT_EQ(a.debugger_us, 20 * kSecond);
  EXPECT_EQ(a.hang_us, 10 * kSecond);
  EXPECT_EQ(a.training_us, (60 - 2 - 20) * kSecond);
  ASSERT_EQ(a.restarts.size(), 1u);
  EXPECT_EQ(a.restarts[0].failed_at_us, 60 * kSecond);  // no failure: the hang round
  EXPECT_FALSE(a.restarts[0].recovered);                 // never training again before the end
  EXPECT_EQ(a.restarts[0].lost_us, 20 * kSecond);
}

TEST(TimeAccount, WithoutStepsEveryRankRunningCountsAndTheLineSaysSo) {
  Story s;
  s.generation(0, 0);
  s.rank(0, 0, 0, "running", 4);
  s.rank(0, 1, 1, "running", 6);
  const auto a = account_time(s.events, Story::us(10));
  EXPECT_FALSE(a.progress_seen);
  EXPECT_EQ(*a.to_start_us, 6 * kSecond);
  EXPECT_EQ(a.training_us, 4 * kSecond);
  const std::string line = time_account_line(a);
  EXPECT_NE(line.find("effective training time 40.0 %"), std::string::npos) << line;
  EXPECT_NE(line.find("start 6.0s"), std::string::npos) << line;
  EXPECT_NE(line.find("counted from every rank running"), std::string::npos) << line;
}

TEST(TimeAccount, AJobThatNeverTrainedHasNoStartAndTheJsonSaysNull) {
  Story s;
  s.generation(0, 0);
  s.rank(0, 0, 0, "init", 1);
  s.rank(0, 1, 1, "running", 2);
  const auto a = account_time(s.events, Story::us(5));
  EXPECT_FALSE(a.to_start_us);
  EXPECT_EQ(a.training_us, 0);
  const auto json = nlohmann::json::parse(time_account_json(a));
  EXPECT_TRUE(json["time_to_start_s"].is_null());
  EXPECT_DOUBLE_EQ(json["wall_s"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(json["effective_training_share"].get<double>(), 0.0);
  EXPECT_NE(time_account_line(a).find("start never reached"), std::string::npos);
  EXPECT_EQ(account_time({}, 0).wall_us, 0);
}

}  // namespace
}  // namespace ddplaunch::timeline
