// The messages of output steering and the job's timeline on the wire.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wire/launcher_messages.h"

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

}  // namespace
}  // namespace ddplaunch
