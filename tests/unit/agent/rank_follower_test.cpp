// RankFollower through its seams: a followed rank's lines go to the master in one batch per
// interval, stamped with the node's generation; following a rank (or no longer) is published
// for the supervisor's tap; a rank printing more than a batch carries loses the excess,
// counted; a closed follower sends nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include <boost/asio/io_context.hpp>

#include "agent/rank_follower.h"
#include "recording_master_link.h"
#include "wire/launcher_messages.h"

namespace ddplaunch {
namespace {

TEST(RankFollower, AFollowedRanksLinesGoInOneBatch) {
  FakeNode node(0, 0, Generation{2});
  RankFollower follower(node.io, node.master, node.events);
  EXPECT_TRUE(follower.follow(5, 30)) << "nobody followed rank 5 until now";
  follower.on_line(5, "step 1");
  follower.on_line(5, "step 2");
  EXPECT_TRUE(node.master.sent.empty()) << "nothing before the batch interval";
  node.run_for(RankFollower::kBatchInterval * 3);
  ASSERT_EQ(node.master.count(messages::Kind::RankOutput), 1);
  EXPECT_EQ(node.master.sent[0].generation, Generation{2});
  auto out = messages::decode_rank_output(node.master.sent[0]);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->rank, 5);
  EXPECT_EQ(out->lines, "step 1\nstep 2\n");
  EXPECT_EQ(out->dropped, 0);
}

TEST(RankFollower, FollowingARankAndNoLongerArePublished) {
  FakeNode node(0, 0, Generation{2});
  RankFollower follower(node.io, node.master, node.events);
  EXPECT_TRUE(follower.follow(5, 30));
  EXPECT_FALSE(follower.follow(5, 30)) << "a renewal: the lines it has were sent already";
  EXPECT_TRUE(follower.follow(7, 30));
  EXPECT_FALSE(follower.follow(5, 0));
  ASSERT_EQ(node.events.count<node_event::FollowedRanksChanged>(), 3);
  EXPECT_EQ(node.events.followed[0], std::set<int>({5}));
  EXPECT_EQ(node.events.followed[1], std::set<int>({5, 7}));
  EXPECT_EQ(node.events.followed[2], std::set<int>({7}));
}

TEST(RankFollower, TheExcessOfABatchIsCountedNotSent) {
  FakeNode node(0, 0, Generation{2});
  RankFollower follower(node.io, node.master, node.events);
  follower.follow(1, 30);
  const std::string line(1000, 'x');
  const std::size_t fit = messages::kMaxRankOutputBytes / (line.size() + 1);
  for (std::size_t i = 0; i < fit + 3; ++i) follower.on_line(1, line);
  follower.flush();
  auto out = messages::decode_rank_output(node.master.sent.at(0));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->lines.size(), fit * (line.size() + 1));
  EXPECT_EQ(out->dropped, 3);
}

TEST(RankFollower, AClosedFollowerSendsNothing) {
  FakeNode node(0, 0, Generation{2});
  RankFollower follower(node.io, node.master, node.events);
  follower.follow(1, 30);
  follower.on_line(1, "last words");
  follower.close();
  node.run_for(RankFollower::kBatchInterval * 3);
  follower.on_line(1, "after the end");
  follower.flush();
  EXPECT_TRUE(node.master.sent.empty());
  EXPECT_FALSE(follower.follow(2, 30));
}

}  // namespace
}  // namespace ddplaunch
