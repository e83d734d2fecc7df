// The messages of output steering and the job's timeline on the wire, and the master's side of
// `ddplaunch tail`: the poll protocol, leases to the nodes, bounded buffers, unknown ranks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wire/launcher_messages.h"
#include "master/rank_tail_relay.h"

namespace ddplaunch {
namespace {

TEST(OutputSteeringMessages, FilterFollowAndOutputRoundTripAndRefuseNonsense) {
  auto filter = messages::decode_output_filter(messages::encode(Generation{3}, messages::OutputFilter{{1, 5, 6, 7}}));
  ASSERT_TRUE(filter);
  EXPECT_EQ(filter->ranks, (std::vector<int>{1, 5, 6, 7}));
  auto all = messages::decode_output_filter(messages::encode(Generation{3}, messages::OutputFilter{}));
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->ranks.empty());
  auto follow = messages::decode_follow_rank(messages::encode(Generation{0}, messages::FollowRank{2, 10}));
  ASSERT_TRUE(follow);
  EXPECT_EQ(follow->rank, 2);
  EXPECT_EQ(follow->seconds, 10);
  EXPECT_FALSE(messages::decode_follow_rank(messages::encode(Generation{0}, messages::FollowRank{-1, 10})));
  EXPECT_FALSE(messages::decode_follow_rank(messages::encode(Generation{0}, messages::FollowRank{1, 100000})));
  auto output = messages::decode_rank_output(messages::encode(Generation{0}, messages::RankOutput{2, "a\x1b[2Jb\nc\n", 4}));
  ASSERT_TRUE(output);
  EXPECT_EQ(output->rank, 2);
  EXPECT_EQ(output->dropped, 4);
  EXPECT_EQ(output->lines.find('\x1b'), std::string::npos);  // another launcher's text is made printable
  EXPECT_NE(output->lines.find("c\n"), std::string::npos);
  rendezvous::Message bad = messages::encode(Generation{0}, messages::OutputFilter{{1}});
  bad.fields["ranks"] = "1,x";
  EXPECT_FALSE(messages::decode_output_filter(bad));
}

TEST(OutputSteeringMessages, TimelineBatchesFitOneMessageEachAndRoundTrip) {
  std::vector<timeline::Event> events(5000);
  for (std::size_t i = 0; i < events.size(); ++i) {
    events[i].at_us = static_cast<std::int64_t>(i);
    events[i].rank = static_cast<int>(i % 64);
    events[i].type = timeline::EventType::State;
    events[i].name = "running";
    events[i].detail = std::string(100, 'd');
  }
  const auto batches = messages::timeline_batches(events);
  ASSERT_GT(batches.size(), 1u);
  std::size_t total = 0;
  for (const auto& batch : batches) {
    const rendezvous::Message m = messages::encode(Generation{1}, messages::TimelineEvents{42, batch});
    auto decoded = messages::decode_timeline_events(m);
    ASSERT_TRUE(decoded) << "a batch of " << batch.size() << " events did not survive the wire";
    EXPECT_EQ(decoded->sent_at_us, 42);
    EXPECT_EQ(decoded->events.size(), batch.size());
    total += decoded->events.size();
  }
  EXPECT_EQ(total, events.size());
  EXPECT_TRUE(messages::timeline_batches({}).empty());
}

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
