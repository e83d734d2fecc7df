// PlannedNodes driven directly: each planned node's standing through a generation, the first
// failed exit, a restart reactivating the finished nodes, and the ranks' places. Pure.
#include <gtest/gtest.h>

#include <vector>

#include "policy/planned_nodes.h"

namespace {

using namespace ddplaunch;

rendezvous::NodeRecord node(int rank, int nproc, int member_id = -1) {
  rendezvous::NodeRecord n;
  n.node_rank = rank;
  n.member_id = member_id;
  n.facts.nproc = nproc;
  n.facts.hostname = "host" + std::to_string(rank);
  return n;
}

TEST(PlannedNodes, EveryPlannedNodeIsActiveUntilItFinishesOrIsLost) {
  PlannedNodes nodes;
  EXPECT_FALSE(nodes.any_planned());
  nodes.plan({node(0, 2), node(1, 2), node(2, 2)});
  EXPECT_TRUE(nodes.any_planned());
  EXPECT_EQ(nodes.active_count(), 3);
  EXPECT_TRUE(nodes.finish(0, NodeStanding::Finished, 0));
  EXPECT_FALSE(nodes.finish(0, NodeStanding::Lost, 1));  // not active any more
  EXPECT_FALSE(nodes.finish(7, NodeStanding::Finished, 0));  // not planned
  EXPECT_TRUE(nodes.finish(1, NodeStanding::Lost, 1));
  EXPECT_EQ(nodes.active_count(), 1);
  EXPECT_EQ(nodes.first_failed_exit(), 1);
  EXPECT_TRUE(nodes.finish(2, NodeStanding::Finished, 3));
  EXPECT_EQ(nodes.first_failed_exit(), 1);  // the first one stays
  EXPECT_EQ(nodes.active_count(), 0);
}

TEST(PlannedNodes, ARestartReactivatesTheFinishedNodesNotTheLostOnes) {
  PlannedNodes nodes;
  nodes.plan({node(0, 1), node(1, 1)});
  nodes.finish(0, NodeStanding::Finished, 0);
  nodes.finish(1, NodeStanding::Lost, 1);
  nodes.reactivate_finished();
  EXPECT_EQ(nodes.active_count(), 1);
  nodes.plan({node(0, 1), node(1, 1)});  // a new generation starts afresh
  EXPECT_EQ(nodes.active_count(), 2);
  EXPECT_EQ(nodes.first_failed_exit(), 0);
  nodes.clear();
  EXPECT_FALSE(nodes.any_planned());
  EXPECT_TRUE(nodes.records().empty());
}

TEST(PlannedNodes, RanksAreLaidOutByNodeRank) {
  PlannedNodes nodes;
  nodes.plan({node(0, 2), node(1, 3)});
  EXPECT_EQ(nodes.node_of_each_rank(), (std::vector<int>{0, 0, 1, 1, 1}));
  EXPECT_EQ(nodes.host_of(1), "host1");
  EXPECT_EQ(nodes.host_of(5), "?");
  EXPECT_EQ(nodes.find(5), nullptr);
  ASSERT_NE(nodes.find(1), nullptr);
  EXPECT_EQ(nodes.find(1)->facts.nproc, 3);
}

TEST(PlannedNodes, AFailureTheMasterObservedIsShapedAsItsNodeWouldReportIt) {
  PlannedNodes nodes;
  nodes.plan({node(0, 2), node(1, 3)});
  TrackedRank state;
  state.node = 1;
  state.last.pid = 4242;
  FailureReport report = nodes.failure_of_rank(3, state, FailurePhase::Init, FailureKind::InitTimeout, "late");
  EXPECT_EQ(report.host, "host1");
  EXPECT_EQ(report.failure.node_rank, 1);
  EXPECT_EQ(report.failure.global_rank, 3);
  EXPECT_EQ(report.failure.local_rank, 1);
  EXPECT_EQ(report.failure.pid, 4242);
  EXPECT_EQ(report.failure.phase, FailurePhase::Init);
  EXPECT_EQ(report.failure.kind, FailureKind::InitTimeout);
  EXPECT_EQ(report.failure.detail, "late");
}

TEST(PlannedNodes, MembersAreTheNodesWithAMemberId) {
  PlannedNodes nodes;
  nodes.plan({node(0, 1, 4), node(1, 1), node(2, 1, 9)});
  EXPECT_EQ(nodes.member_ids(), (std::vector<int>{4, 9}));
}

TEST(PlannedNodes, StandingsHaveNames) {
  for (NodeStanding s : {NodeStanding::Active, NodeStanding::Finished, NodeStanding::Lost})
    EXPECT_EQ(node_standing_from_name(node_standing_name(s)), s);
  EXPECT_EQ(node_standing_name(NodeStanding::Finished), "finished");
  EXPECT_FALSE(node_standing_from_name("gone"));
}

}  // namespace
