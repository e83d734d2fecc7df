// RankTransitions: only ranks whose state moved on give an event; a new generation starts afresh.
#include "timeline/rank_transitions.h"

#include <gtest/gtest.h>

namespace ddplaunch::timeline {
namespace {

TEST(RankTransitions, TheFirstLookGivesEveryRanksStateThenOnlyChanges) {
  RankTransitions transitions;
  auto first = transitions.observe(Generation{0}, {{0, "setup"}, {1, "setup"}}, 100);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].rank, 0);
  EXPECT_EQ(first[0].name, "setup");
  EXPECT_EQ(first[0].type, EventType::State);
  EXPECT_EQ(first[0].at_us, 100);
  EXPECT_TRUE(transitions.observe(Generation{0}, {{0, "setup"}, {1, "setup"}}, 200).empty());
  auto second = transitions.observe(Generation{0}, {{0, "init"}, {1, "setup"}}, 300);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].rank, 0);
  EXPECT_EQ(second[0].name, "init");
  EXPECT_EQ(second[0].at_us, 300);
}

TEST(RankTransitions, ANewGenerationStartsEveryRankAgainEvenInTheSameState) {
  RankTransitions transitions;
  transitions.observe(Generation{0}, {{0, "setup"}}, 1);
  auto next = transitions.observe(Generation{1}, {{0, "setup"}}, 2);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].generation, Generation{1});
}

TEST(RankTransitions, ARanksFirstStepOfAGenerationIsOneInstantAfterItsState) {
  RankTransitions transitions;
  EXPECT_EQ(transitions.observe(Generation{0}, {{0, "running", false}}, 1).size(), 1u);
  auto stepped = transitions.observe(Generation{0}, {{0, "running", true}}, 2);
  ASSERT_EQ(stepped.size(), 1u);
  EXPECT_EQ(stepped[0].type, EventType::Instant);
  EXPECT_EQ(stepped[0].name, kFirstStepName);
  EXPECT_EQ(stepped[0].category, kProgressCategory);
  EXPECT_EQ(stepped[0].rank, 0);
  EXPECT_EQ(stepped[0].at_us, 2);
  EXPECT_TRUE(transitions.observe(Generation{0}, {{0, "running", true}}, 3).empty());  // once
  // A restart: its first step is told again, after the state of the new generation.
  auto again = transitions.observe(Generation{1}, {{0, "running", true}}, 4);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].type, EventType::State);
  EXPECT_EQ(again[1].name, kFirstStepName);
  EXPECT_EQ(again[1].generation, Generation{1});
}

TEST(RankTransitions, ExitsAndTheJobsEndCloseALaneOtherStatesOpenOne) {
  Event e;
  e.type = EventType::State;
  for (const char* closing : {"exited:0", "exited:1", "killed:SIGKILL", "ended"}) {
    e.name = closing;
    EXPECT_TRUE(ends_lane(e)) << closing;
  }
  for (const char* open : {"setup", "init", "running", "debugging", "paused"}) {
    e.name = open;
    EXPECT_FALSE(ends_lane(e)) << open;
  }
  e.type = EventType::Instant;
  e.name = "exited:1";
  EXPECT_FALSE(ends_lane(e));
}

}  // namespace
}  // namespace ddplaunch::timeline
