// node_assignment: the master's assignment of a node and the node's own values become the
// workers' contract for one generation, role ranks counted over the nodes of the same role.
#include <gtest/gtest.h>

#include <string>

#include "agent/node_assignment.h"

namespace ddplaunch {
namespace {

rendezvous::NodeRecord node(int rank, int nproc, std::string role) {
  rendezvous::NodeRecord n;
  n.node_rank = rank;
  n.facts.nproc = nproc;
  n.facts.role = std::move(role);
  return n;
}

NodePlan plan_of(int nproc, std::string role) {
  NodePlan plan;
  plan.nproc = nproc;
  plan.config.role = std::move(role);
  plan.config.job_id = "job-7";
  plan.config.restart.max_restarts = 2;
  return plan;
}

rendezvous::Assignment assignment_of_node(int node_rank) {
  rendezvous::Assignment a;
  a.generation = Generation{3};
  a.node_rank = node_rank;
  a.node_count = 3;
  a.rank_offset = 4 * node_rank;
  a.world_size = 12;
  a.worker_master_addr = "10.0.0.1";
  a.worker_master_port = 29501;
  a.init_deadline_s = 90;
  a.run_id = "run-1";
  return a;
}

TEST(NodeAssignment, TheMastersAssignmentAndTheNodesOwnValuesMakeTheContract) {
  const NodeAssignment n = node_assignment(assignment_of_node(1), plan_of(4, "trainer"), "/tmp/s.sock", "eth1", 29400);
  EXPECT_EQ(n.node_rank, 1);
  EXPECT_EQ(n.node_count, 3);
  EXPECT_EQ(n.rank_offset, 4);
  EXPECT_EQ(n.world_size, 12);
  EXPECT_EQ(n.local_world_size, 4);
  EXPECT_EQ(n.master_addr, "10.0.0.1");
  EXPECT_EQ(n.master_port, 29501);
  EXPECT_DOUBLE_EQ(n.init_deadline_s, 90);
  EXPECT_EQ(n.generation, Generation{3});
  EXPECT_EQ(n.max_restarts, 2);
  EXPECT_EQ(n.run_id, "run-1");
  EXPECT_EQ(n.role, "trainer");
  EXPECT_EQ(n.job_id, "job-7");
  EXPECT_EQ(n.status_socket, "/tmp/s.sock");
  EXPECT_EQ(n.socket_ifname, "eth1");
  EXPECT_EQ(n.rendezvous_port, 29400);
  // Without the node list every node is taken to share the role: the defaults stand.
  EXPECT_EQ(n.role_rank_offset, -1);
  EXPECT_EQ(n.role_world_size, 0);
}

TEST(NodeAssignment, RoleRanksCountOnlyTheNodesOfTheSameRole) {
  rendezvous::Assignment a = assignment_of_node(2);
  a.nodes = {node(0, 4, "trainer"), node(1, 4, "reader"), node(2, 4, "trainer")};
  const NodeAssignment n = node_assignment(a, plan_of(4, "trainer"), "", "", 0);
  EXPECT_EQ(n.role_rank_offset, 4);  // node 0's trainers only
  EXPECT_EQ(n.role_world_size, 8);
}

}  // namespace
}  // namespace ddplaunch
