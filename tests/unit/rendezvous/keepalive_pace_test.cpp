// The keep-alive pace: the configured interval while the job is small, stretched with the node
// count beyond the master's budget of heartbeats a second, the timeout in the same ratio; the
// pace a peer announces and follows; one heartbeat in kRttProbeEvery asks for an answer.
#include <gtest/gtest.h>

#include <chrono>

#include "../../../rendezvous/src/keepalive_pace.h"

namespace ddplaunch::rendezvous::detail {
namespace {

using namespace std::chrono_literals;

TEST(KeepalivePace, TheConfiguredPaceHoldsUntilTheNodesExceedTheBudget) {
  const KeepalivePace small = keepalive_pace(1000ms, 10000ms, 800, 800);
  EXPECT_EQ(small.interval, 1000ms);
  EXPECT_EQ(small.timeout, 10000ms);
  const KeepalivePace unbounded = keepalive_pace(1000ms, 10000ms, 16384, 0);
  EXPECT_EQ(unbounded.interval, 1000ms);
}

TEST(KeepalivePace, ALargeJobStretchesTheIntervalAndTheTimeoutAlike) {
  const KeepalivePace large = keepalive_pace(1000ms, 10000ms, 16384, 800);
  EXPECT_EQ(large.interval, 20480ms);  // 16384 heartbeats spread over 20.48 s: 800 a second
  EXPECT_EQ(large.timeout, 204800ms);  // still ten intervals
  const KeepalivePace absurd = keepalive_pace(1000ms, 10000ms, 1u << 30, 1);
  EXPECT_EQ(absurd.interval, kLongestPace);
}

TEST(KeepalivePace, APeerFollowsALongerAnnouncedPaceNeverAShorterOne) {
  EXPECT_EQ(paced_by(1000ms, 10000ms, 5000ms).interval, 5000ms);
  EXPECT_EQ(paced_by(1000ms, 10000ms, 5000ms).timeout, 50000ms);
  EXPECT_EQ(paced_by(1000ms, 10000ms, 200ms).interval, 1000ms);
  EXPECT_EQ(paced_by(1000ms, 10000ms, 200ms).timeout, 10000ms);
}

TEST(KeepalivePace, OneHeartbeatInEightAsksForAnAnswerAndEachCarriesThePace) {
  int asking = 0;
  for (std::uint64_t seq = 1; seq <= 16; ++seq) {
    Frame hb;
    put_heartbeat(hb, seq, 2500ms);
    EXPECT_EQ(announced_pace(hb), std::chrono::milliseconds(2500));
    asking += asks_echo(hb) ? 1 : 0;
  }
  EXPECT_EQ(asking, 2);
  Frame forged;
  forged.fields["pace_ms"] = "99999999999";  // beyond the longest pace: not believed
  EXPECT_FALSE(announced_pace(forged));
  forged.fields["pace_ms"] = "-5";
  EXPECT_FALSE(announced_pace(forged));
}

// Any frame says its sender is alive: a heartbeat fills only a silence, and one that tells a
// peer a pace it does not know yet is always owed.
TEST(KeepalivePace, AHeartbeatIsOwedOnlyAfterASilenceOrToTellANewPace) {
  const auto t = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  EXPECT_FALSE(heartbeat_due(t, t - 900ms, 1000ms));
  EXPECT_TRUE(heartbeat_due(t, t - 1000ms, 1000ms));
  EXPECT_TRUE(heartbeat_due(t, t - 5000ms, 1000ms));
  EXPECT_TRUE(heartbeat_due(t, t - 10ms, 1000ms, /*pace_told=*/false));
}

}  // namespace
}  // namespace ddplaunch::rendezvous::detail
