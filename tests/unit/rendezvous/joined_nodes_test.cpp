// The rendezvous server's table of joined nodes: join order, the slots of a generation, who is
// ready for it and who is missing, without sockets (the peers have no connection here).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../../../rendezvous/src/joined_nodes.h"

namespace ddplaunch::rendezvous {
namespace {

std::shared_ptr<ServerPeer> node(const std::string& host, int requested_rank = -1, int member_id = -1) {
  auto peer = std::make_shared<ServerPeer>();
  peer->state = ServerPeer::State::kJoined;
  peer->record.facts.hostname = host;
  peer->record.node_rank = requested_rank;
  peer->rank_requested = requested_rank >= 0;
  peer->record.member_id = member_id;
  return peer;
}

TEST(JoinedNodes, RequestedRanksHoldTheirSlotAtOnceAndTheOthersGetTheLowestFreeInJoinOrder) {
  JoinedNodes nodes;
  nodes.open_slots(3);
  auto a = node("a"), b = node("b", 0), c = node("c");
  nodes.add(a);
  nodes.add(b);
  EXPECT_EQ(nodes.holder(0), b);
  EXPECT_EQ(nodes.holder(1), nullptr);
  EXPECT_EQ(nodes.holder(7), nullptr);
  EXPECT_EQ(nodes.holder(-1), nullptr);
  // While joining: two nodes still have no rank, so what is missing is a count.
  EXPECT_EQ(nodes.missing(false, Generation{0}, 3), std::vector<std::string>{"1 more node (ranks unassigned)"});
  nodes.add(c);
  nodes.rank_in_join_order();
  EXPECT_EQ(a->record.node_rank, 1);
  EXPECT_EQ(c->record.node_rank, 2);
  EXPECT_EQ(nodes.holder(2), c);
  const auto records = nodes.slot_records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].facts.hostname, "b");
  EXPECT_EQ(records[1].facts.hostname, "a");
  EXPECT_EQ(nodes.count(), 3u);
}

TEST(JoinedNodes, ANodeThatLeavesFreesItsSlotAndIsMissingByRank) {
  JoinedNodes nodes;
  nodes.open_slots(2);
  auto a = node("a", 0), b = node("b", 1);
  nodes.add(a);
  nodes.add(b);
  nodes.remove(a);
  EXPECT_EQ(nodes.holder(0), nullptr);
  EXPECT_EQ(nodes.count(), 1u);
  // Every joined node asked for its rank: the free ranks are named.
  EXPECT_EQ(nodes.missing(false, Generation{0}, 2), std::vector<std::string>{"node rank 0"});
}

TEST(JoinedNodes, ARejoinWaitsForEverySlotAndNamesTheLostAndTheNotYetReady) {
  JoinedNodes nodes;
  nodes.open_slots(3);
  auto a = node("a", 0), b = node("b", 1), c = node("c", 2);
  for (const auto& p : {a, b, c}) nodes.add(p);
  const Generation next{4};
  a->ready_for = next;
  b->ready_for = Generation{3};  // ready for an older generation only
  nodes.remove(c);
  EXPECT_EQ(nodes.ready_count(next), 1);
  EXPECT_FALSE(nodes.every_slot_ready(next));
  EXPECT_EQ(nodes.missing(true, next, 3), (std::vector<std::string>{"node rank 1 (host 'b')", "node rank 2 (lost)"}));
  b->ready_for = next;
  EXPECT_EQ(nodes.ready_count(next), 2);
  EXPECT_FALSE(nodes.every_slot_ready(next)) << "a lost slot is never ready";
}

TEST(JoinedNodes, MembersAreSeatedInTheLaunchersOrderAndTheOthersHoldNoRank) {
  JoinedNodes nodes;
  nodes.open_slots(2);
  auto a = node("a", -1, 10), b = node("b", -1, 11), spare = node("s", -1, 12);
  for (const auto& p : {a, b, spare}) nodes.add(p);
  nodes.seat_members({11, 10});
  EXPECT_EQ(nodes.holder(0), b);
  EXPECT_EQ(nodes.holder(1), a);
  EXPECT_EQ(spare->record.node_rank, -1);
  EXPECT_EQ(nodes.member(12), spare);
  EXPECT_EQ(nodes.member(99), nullptr);
  // A member gone before it is seated leaves its slot empty.
  nodes.remove(b);
  nodes.seat_members({11, 12});
  EXPECT_EQ(nodes.holder(0), nullptr);
  EXPECT_EQ(nodes.holder(1), spare);
  EXPECT_EQ(a->record.node_rank, -1);
  EXPECT_EQ(nodes.slots().size(), 2u);
}

TEST(JoinedNodes, TheMissingListIsBoundedAndCountsTheRest) {
  JoinedNodes nodes;
  nodes.open_slots(20);
  nodes.add(node("a", 0));
  const auto missing = nodes.missing(false, Generation{0}, 20);
  ASSERT_EQ(missing.size(), 17u);
  EXPECT_EQ(missing.front(), "node rank 1");
  EXPECT_EQ(missing.back(), "... and 3 more");
}

}  // namespace
}  // namespace ddplaunch::rendezvous
