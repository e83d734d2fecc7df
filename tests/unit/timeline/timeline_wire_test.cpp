// The node → master line format: round trip, cleaned texts, and strict bounded decoding.
#include "timeline/timeline_wire.h"

#include <gtest/gtest.h>

namespace ddplaunch::timeline {
namespace {

TEST(TimelineWire, EventsSurviveTheRoundTripWithTabsAndLineBreaksMadeSpaces) {
  Event state;
  state.at_us = 123456789;
  state.generation = Generation{2};
  state.rank = 5;
  state.type = EventType::State;
  state.name = "exited:1";
  Event instant;
  instant.at_us = -7;
  instant.rank = kNodeLane;
  instant.name = "hang\tround";
  instant.category = "hang";
  instant.detail = "line one\nline two";
  auto decoded = decode_events(encode_events({state, instant}));
  ASSERT_TRUE(decoded);
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[0].at_us, 123456789);
  EXPECT_EQ((*decoded)[0].generation, Generation{2});
  EXPECT_EQ((*decoded)[0].rank, 5);
  EXPECT_EQ((*decoded)[0].type, EventType::State);
  EXPECT_EQ((*decoded)[0].name, "exited:1");
  EXPECT_EQ((*decoded)[1].rank, kNodeLane);
  EXPECT_EQ((*decoded)[1].type, EventType::Instant);
  EXPECT_EQ((*decoded)[1].name, "hang round");
  EXPECT_EQ((*decoded)[1].detail, "line one line two");
}

TEST(TimelineWire, LongTextsAreCutAtTheLimits) {
  Event e;
  e.name = std::string(500, 'n');
  e.detail = std::string(5000, 'd');
  auto decoded = decode_events(encode_events({e}));
  ASSERT_TRUE(decoded);
  EXPECT_EQ((*decoded)[0].name.size(), kMaxNameChars);
  EXPECT_EQ((*decoded)[0].detail.size(), kMaxDetailChars);
}

TEST(TimelineWire, MalformedOrTooManyLinesAreRefusedWhole) {
  EXPECT_FALSE(decode_events("1\t0\t0\ts\tinit\t\n"));                 // a field missing
  EXPECT_FALSE(decode_events("x\t0\t0\ts\tinit\t\t\n"));               // not a number
  EXPECT_FALSE(decode_events("1\t-1\t0\ts\tinit\t\t\n"));              // a negative generation
  EXPECT_FALSE(decode_events("1\t0\t-2\ts\tinit\t\t\n"));              // no such lane
  EXPECT_FALSE(decode_events("1\t0\t0\tq\tinit\t\t\n"));               // neither state nor instant
  EXPECT_FALSE(decode_events("1\t0\t0\ts\t\t\t\n"));                   // no name
  EXPECT_FALSE(decode_events("1\t0\t0\ts\t" + std::string(kMaxNameChars + 1, 'n') + "\t\t\n"));
  std::string many;
  for (std::size_t i = 0; i <= kMaxEventsPerMessage; ++i) many += "1\t0\t0\ts\tinit\t\t\n";
  EXPECT_FALSE(decode_events(many));
  auto empty = decode_events("");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace ddplaunch::timeline
