// The master's dropped-connection warnings: the first few of each interval in full, the rest
// counted and summed up once per interval (driven with explicit times: no clock, no timer).
#include <gtest/gtest.h>

#include "master/dropped_connections_log.h"

using ddplaunch::DroppedConnectionTally;
using namespace std::chrono_literals;

TEST(DroppedConnections, FirstFewInFullThenOneSummaryPerInterval) {
  DroppedConnectionTally tally(10s, 3);
  auto t0 = DroppedConnectionTally::Clock::time_point{} + 1h;
  int logged = 0;
  for (int i = 0; i < 1837; ++i)
    logged += tally.note(t0 + std::chrono::milliseconds(i), "127.0.0.1:" + std::to_string(40000 + i),
                         "exceeds the limit").empty() ? 0 : 1;
  EXPECT_EQ(logged, 3);
  EXPECT_EQ(tally.counted(), 1834);
  EXPECT_EQ(tally.interval_end(), t0 + 10s);
  std::string summary = tally.summarize();
  EXPECT_NE(summary.find("dropped 1834 more connections in the last 10.0 s"), std::string::npos) << summary;
  EXPECT_NE(summary.find("127.0.0.1:41836: exceeds the limit"), std::string::npos) << summary;
  EXPECT_EQ(tally.summarize(), "") << "nothing new counted";
  // The next interval starts with its first drops logged in full again.
  EXPECT_NE(tally.note(t0 + 11s, "127.0.0.1:1", "garbage"), "");
}

TEST(DroppedConnections, QuietIntervalEndsWithoutSummaryAndTheNextStartsAfresh) {
  DroppedConnectionTally tally(10s, 2);
  auto t0 = DroppedConnectionTally::Clock::time_point{} + 1h;
  EXPECT_NE(tally.note(t0, "a", "x"), "");
  EXPECT_NE(tally.note(t0 + 1s, "b", "x"), "");
  EXPECT_NE(tally.note(t0 + 12s, "c", "x"), "") << "a new interval: logged in full";
  EXPECT_NE(tally.note(t0 + 13s, "d", "x"), "");
  EXPECT_EQ(tally.note(t0 + 14s, "e", "x"), "");
  EXPECT_EQ(tally.interval_end(), t0 + 22s);
}
