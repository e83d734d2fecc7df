// The master's side of `ddplaunch tail`: the poll protocol, leases to the nodes, bounded
// buffers, unknown ranks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wire/launcher_messages.h"
#include "master/rank_tail_relay.h"

namespace ddplaunch {
namespace {

TEST(RankTailQuery, RequestsAndRepliesRoundTripAndMalformedOnesAreRefused) {
  auto request = decode_tail_request(encode_tail_request({3, 17}));
  ASSERT_TRUE(request);
  EXPECT_EQ(request->rank, 3);
  EXPECT_EQ(request->from, 17);
  for (const char* bad : {"tail", "tail 3", "tail x 1", "tail -1 0", "tail 3 -2", "stacks", "tail 3 1 2"})
    EXPECT_FALSE(decode_tail_request(bad)) << bad;
  TailReply reply{{9, 2, "a\nb\n"}, ""};
  auto decoded = decode_tail_reply(encode_tail_reply(reply));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->slice.next, 9);
  EXPECT_EQ(decoded->slice.missed, 2);
  EXPECT_EQ(decoded->slice.lines, "a\nb\n");
  auto refused = decode_tail_reply(encode_tail_reply({{}, "no such rank"}));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->error, "no such rank");
  EXPECT_FALSE(decode_tail_reply("garbage"));
}

TEST(RankTailRelay, AFirstPollAsksTheNodesRenewsTheLeaseWhileFollowedAndForgetsAnUnpolledRank) {
  std::vector<std::pair<int, int>> asked;
  RankTailRelay relay([&](int rank, int seconds) { asked.emplace_back(rank, seconds); });
  const auto t0 = RankTailRelay::Clock::time_point{} + std::chrono::hours(1);
  auto first = decode_tail_reply(relay.answer({2, -1}, 4, t0));
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->slice.lines.empty());
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0], std::make_pair(2, RankTailRelay::kLeaseSeconds));
  relay.on_output({2, "one\ntwo\n", 0});
  relay.on_output({3, "not followed\n", 0});  // nobody asked for rank 3: dropped
  EXPECT_TRUE(relay.unread(t0 + std::chrono::milliseconds(100)));
  auto second = decode_tail_reply(relay.answer({2, first->slice.next}, 4, t0 + std::chrono::seconds(1)));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->slice.lines, "one\ntwo\n");
  EXPECT_FALSE(relay.unread(t0 + std::chrono::seconds(1)));
  EXPECT_EQ(asked.size(), 1u);  // the lease still runs
  relay.answer({2, second->slice.next}, 4, t0 + RankTailRelay::kRenewAfter + std::chrono::seconds(1));
  EXPECT_EQ(asked.size(), 2u);  // renewed
  relay.on_output({2, "three\n", 1});
  auto third = decode_tail_reply(relay.answer({2, second->slice.next}, 4, t0 + std::chrono::seconds(5)));
  ASSERT_TRUE(third);
  EXPECT_NE(third->slice.lines.find("1 line(s) of rank 2 were dropped on its node"), std::string::npos);
  EXPECT_NE(third->slice.lines.find("three\n"), std::string::npos);
  // Nobody polled for longer than kForgetAfter: a later poll starts over (the nodes are asked again).
  const auto later = t0 + std::chrono::seconds(5) + RankTailRelay::kForgetAfter + std::chrono::seconds(1);
  auto fresh = decode_tail_reply(relay.answer({2, third->slice.next}, 4, later));
  ASSERT_TRUE(fresh);
  EXPECT_TRUE(fresh->slice.lines.empty());
  EXPECT_EQ(asked.size(), 3u);
}

TEST(RankTailRelay, UnknownRanksAndTooManyFollowersAreRefusedWithTheReason) {
  RankTailRelay relay([](int, int) {});
  const auto now = RankTailRelay::Clock::now();
  auto none = decode_tail_reply(relay.answer({4, -1}, 4, now));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->error, "there is no rank 4 in this job (ranks 0-3)");
  for (int rank = 0; rank < static_cast<int>(RankTailRelay::kMaxFollowed); ++rank)
    EXPECT_TRUE(decode_tail_reply(relay.answer({rank, -1}, 1000, now))->error.empty());
  auto full = decode_tail_reply(relay.answer({999, -1}, 1000, now));
  EXPECT_NE(full->error.find("at most 64"), std::string::npos) << full->error;
}

}  // namespace
}  // namespace ddplaunch
