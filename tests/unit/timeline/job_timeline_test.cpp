// JobTimeline: nodes' clocks aligned by the fastest delivery, links from a failure to its
// order, and the bound (the start kept, the latest window kept, the rest counted).
#include "timeline/job_timeline.h"

#include <gtest/gtest.h>

namespace ddplaunch::timeline {
namespace {

Event rank_state(std::int64_t at, int rank, const char* name) {
  Event e;
  e.at_us = at;
  e.rank = rank;
  e.type = EventType::State;
  e.name = name;
  return e;
}

TEST(JobTimeline, ANodesEventsMoveOntoTheMastersClockByItsFastestDelivery) {
  JobTimeline timeline;
  // The node's clock is 1,000,000 µs behind the master's; the first batch took 5 ms to arrive,
  // the second 1 ms: the second's estimate wins, for every event of that node.
  timeline.record_from_node(1, 10'000, 1'015'000, {rank_state(9'000, 2, "setup")});
  timeline.record_from_node(1, 20'000, 1'021'000, {rank_state(19'000, 2, "init")});
  auto events = timeline.aligned_events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].at_us, 1'010'000);
  EXPECT_EQ(events[1].at_us, 1'020'000);
  EXPECT_EQ(events[0].node, 1);  // the connection names the node
}

TEST(JobTimeline, EventsComeOutInTimeOrderAcrossNodesAndTheMaster) {
  JobTimeline timeline;
  Event generation;
  generation.at_us = 500;
  generation.type = EventType::State;
  generation.name = "generation 0";
  timeline.record(generation);
  timeline.record_from_node(0, 100, 100, {rank_state(400, 0, "setup")});
  timeline.record_from_node(1, 100, 300, {rank_state(450, 1, "setup")});  // 200 µs ahead: 650
  auto events = timeline.aligned_events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].rank, 0);
  EXPECT_EQ(events[1].name, "generation 0");
  EXPECT_EQ(events[2].rank, 1);
  EXPECT_EQ(events[2].at_us, 650);
}

TEST(JobTimeline, TheFirstFailureLinksToTheRestartItCausedLaterOnesDoNot) {
  JobTimeline timeline;
  timeline.record_failure(1, 3, Generation{0}, 10, "rank 3 exited 1");
  timeline.record_failure(0, 0, Generation{0}, 11, "rank 0 exited 1 (its peer left)");
  timeline.record_order("restart → generation 1", "restart", Generation{1}, 20, "rank 3 exited 1");
  timeline.record_failure(0, 1, Generation{1}, 30, "rank 1 exited 1");
  timeline.record_order("stop", "stop", Generation{1}, 40, "no restarts left");
  auto events = timeline.aligned_events();
  ASSERT_EQ(events.size(), 5u);
  EXPECT_NE(events[0].flow_out, 0);
  EXPECT_EQ(events[1].flow_out, 0);
  EXPECT_EQ(events[2].flow_in, events[0].flow_out);
  EXPECT_NE(events[3].flow_out, 0);
  EXPECT_NE(events[3].flow_out, events[0].flow_out);
  EXPECT_EQ(events[4].flow_in, events[3].flow_out);
}

TEST(JobTimeline, NodesCannotForgeLinks) {
  JobTimeline timeline;
  Event forged = rank_state(1, 0, "setup");
  forged.flow_in = forged.flow_out = 99;
  timeline.record_from_node(0, 0, 0, {forged});
  EXPECT_EQ(timeline.aligned_events()[0].flow_in, 0);
  EXPECT_EQ(timeline.aligned_events()[0].flow_out, 0);
}

TEST(JobTimeline, TheBoundKeepsTheStartAndTheLatestWindowAndCountsTheRest) {
  JobTimeline timeline(8);  // 2 kept from the start, a window of the latest 6
  for (int i = 0; i < 20; ++i) timeline.record(rank_state(i, 0, i % 2 ? "running" : "init"));
  EXPECT_EQ(timeline.size(), 8u);
  EXPECT_EQ(timeline.dropped(), 12u);
  auto events = timeline.aligned_events();
  EXPECT_EQ(events[0].at_us, 0);
  EXPECT_EQ(events[1].at_us, 1);
  EXPECT_EQ(events[2].at_us, 14);
  EXPECT_EQ(events.back().at_us, 19);
}

TEST(JobTimeline, TheEndSaysTheExitStatus) {
  JobTimeline timeline;
  timeline.record_end(3, Generation{0}, 77);
  ASSERT_TRUE(timeline.exit_code());
  EXPECT_EQ(*timeline.exit_code(), 3);
  EXPECT_EQ(timeline.aligned_events().back().name, "ended");
}

}  // namespace
}  // namespace ddplaunch::timeline
