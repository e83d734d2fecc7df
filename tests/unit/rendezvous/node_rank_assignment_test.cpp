// assign_node_ranks: the one rule by which the nodes of a first generation get their ranks.
#include "ddplaunch/rendezvous/node_rank_assignment.h"

#include <gtest/gtest.h>

namespace ddplaunch::rendezvous {
namespace {

using Ranks = std::vector<int>;

TEST(NodeRankAssignment, NodesWithoutWishesTakeRanksInJoinOrder) {
  EXPECT_EQ(assign_node_ranks({-1, -1, -1}, 3), (Ranks{0, 1, 2}));
}

TEST(NodeRankAssignment, AWishIsHonouredAndTheOthersTakeTheLowestFreeRanks) {
  EXPECT_EQ(assign_node_ranks({-1, 0, -1, 1}, 4), (Ranks{2, 0, 3, 1}));
  EXPECT_EQ(assign_node_ranks({3, -1, -1, -1}, 4), (Ranks{3, 0, 1, 2}));
}

TEST(NodeRankAssignment, TheFirstNodeToAskForARankGetsIt) {
  EXPECT_EQ(assign_node_ranks({1, 1, -1}, 3), (Ranks{1, 0, 2}));
}

TEST(NodeRankAssignment, AWishBeyondTheSlotsCountsAsNone) {
  EXPECT_EQ(assign_node_ranks({7, -1}, 2), (Ranks{0, 1}));
}

TEST(NodeRankAssignment, MoreSlotsThanNodesLeavesGapsWhereWishesPointed) {
  // Three of four nodes: the caller (Membership) closes the gap afterwards.
  EXPECT_EQ(assign_node_ranks({3, -1, -1}, 4), (Ranks{3, 0, 1}));
}

TEST(NodeRankAssignment, NoNodesNoRanks) { EXPECT_TRUE(assign_node_ranks({}, 0).empty()); }

}  // namespace
}  // namespace ddplaunch::rendezvous
