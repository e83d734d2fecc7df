// UnattendedStop: with no terminal of ours, ranks stopped at a breakpoint continue once nobody
// attached `ddplaunch debug` within the wait; a person who is there keeps them stopped.
#include "debug/unattended_stop.h"

#include <gtest/gtest.h>

namespace ddplaunch::debug {
namespace {

using namespace std::chrono_literals;
const UnattendedStop::Clock::time_point t0 = UnattendedStop::Clock::time_point{} + 1h;

TEST(UnattendedStop, WithoutAnyClientTheStoppedRanksContinueWhenTheWaitRunsOut) {
  UnattendedStop rule(30s);
  EXPECT_EQ(rule.wait(), 30s);
  EXPECT_TRUE(rule.nobody_came(t0 + 30s));
}

TEST(UnattendedStop, AClientWithinTheWaitKeepsThemStoppedForAnotherWait) {
  UnattendedStop rule(30s);
  rule.on_client(t0 + 10s);
  EXPECT_FALSE(rule.nobody_came(t0 + 30s)) << "polled 20 s ago: a person is there";
  EXPECT_FALSE(rule.nobody_came(t0 + 39s));
  EXPECT_TRUE(rule.nobody_came(t0 + 40s)) << "the person left: 30 s without a poll";
}

TEST(UnattendedStop, EveryPollCounts) {
  UnattendedStop rule(5s);
  for (int s = 0; s < 60; s += 4) rule.on_client(t0 + std::chrono::seconds(s));
  EXPECT_FALSE(rule.nobody_came(t0 + 60s));
  EXPECT_TRUE(rule.nobody_came(t0 + 61s));
}

}  // namespace
}  // namespace ddplaunch::debug
