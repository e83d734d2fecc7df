// The rendezvous server's join rules, without sockets: which joins are refused (and how the
// refusal reads) and how the launcher's plan becomes one Assignment per node.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "../../../rendezvous/src/join_rules.h"

namespace ddplaunch::rendezvous {
namespace {

using namespace join_rules;

ServerOptions job_of(int nodes, bool membership = false, int spares = 0) {
  ServerOptions o;
  o.expected_nodes = nodes;
  o.launcher_assigns_slots = membership;
  o.max_spares = spares;
  return o;
}

NodeFacts facts(int expected_nodes, const std::string& version = "1.0") {
  NodeFacts f;
  f.expected_nodes = expected_nodes;
  f.launcher_version = version;
  return f;
}

TEST(JoinRules, AnotherLauncherVersionIsRefusedOnlyWhenTheMasterNamesOne) {
  ServerOptions o = job_of(2);
  EXPECT_EQ(launcher_version_refusal(o, facts(2, "0.9"), "host 'b'"), "");
  o.launcher_version = "1.0";
  EXPECT_EQ(launcher_version_refusal(o, facts(2, "1.0"), "host 'b'"), "");
  const std::string why = launcher_version_refusal(o, facts(2, "0.9"), "host 'b'");
  EXPECT_NE(why.find("host 'b' runs ddplaunch '0.9', the master runs '1.0'"), std::string::npos) << why;
  EXPECT_NE(why.find("install the same ddplaunch"), std::string::npos) << why;
}

TEST(JoinRules, ANodeStartedForAnotherNodeCountIsRefusedAndToldWhichFlag) {
  const ServerOptions o = job_of(4);
  EXPECT_EQ(node_count_refusal(o, facts(4), "host 'b'"), "");
  EXPECT_EQ(node_count_refusal(o, facts(0), "host 'b'"), "") << "a node that does not say is not refused";
  const std::string why = node_count_refusal(o, facts(3), "host 'b'");
  EXPECT_NE(why.find("job of 3 nodes, but the master (node 0) for 4"), std::string::npos) << why;
  EXPECT_NE(why.find("--nodes / --nnodes"), std::string::npos) << why;
}

TEST(JoinRules, TheJobHasRoomForItsNodesAndWithMembershipItsSpares) {
  const ServerOptions plain = job_of(2);
  EXPECT_EQ(no_room_refusal(plain, true, 1, "host 'c'"), "");
  EXPECT_NE(no_room_refusal(plain, true, 2, "host 'c'").find("too many nodes: the job expects 2"), std::string::npos);
  EXPECT_NE(no_room_refusal(plain, false, 0, "host 'c'").find("--job-id is already running"), std::string::npos)
      << "once the job runs, a plain job admits nobody";
  const ServerOptions spares = job_of(2, true, 1);
  EXPECT_EQ(no_room_refusal(spares, true, 2, "host 'c'"), "") << "the spare's place";
  const std::string why = no_room_refusal(spares, true, 3, "host 'd'");
  EXPECT_NE(why.find("room for 2 nodes and 1 spare(s)"), std::string::npos) << why;
  EXPECT_NE(why.find("--spares"), std::string::npos) << why;
  EXPECT_EQ(job_places(spares), 3);
  EXPECT_EQ(job_places(plain), 2);
}

TEST(JoinRules, ARankBeyondTheJobIsRefusedUnlessItAsksToBeASpareAndAHeldRankIsADuplicate) {
  const ServerOptions plain = job_of(2);
  EXPECT_EQ(requested_rank_refusal(plain, -1, "host 'b'", ""), "");
  EXPECT_EQ(requested_rank_refusal(plain, 1, "host 'b'", ""), "");
  const std::string beyond = requested_rank_refusal(plain, 2, "host 'b'", "");
  EXPECT_NE(beyond.find("asks for node rank 2 but the job has 2 nodes (ranks 0..1)"), std::string::npos) << beyond;
  EXPECT_EQ(requested_rank_refusal(job_of(2, true, 1), 2, "host 'b'", ""), "") << "a spare";
  const std::string twice = requested_rank_refusal(plain, 1, "host 'b' (10.0.0.2)", "host 'a' (10.0.0.1)");
  EXPECT_EQ(twice, "duplicate node rank 1: host 'b' (10.0.0.2) asks for it but host 'a' (10.0.0.1) already holds "
                   "it; every node needs a distinct --node-rank");
}

NodeRecord slot(int nproc) {
  NodeRecord r;
  r.facts.nproc = nproc;
  return r;
}

TEST(JoinRules, EachSlotGetsItsRankOffsetAndTheWholeWorldAndThePlansNames) {
  JobPlan plan;
  plan.worker_master_addr = "10.0.0.1";
  plan.worker_master_port = 29500;
  plan.init_deadline_s = 42.5;
  plan.run_id = "run";
  plan.run_nonce = "nonce";
  const auto result = assignments_for(Generation{3}, {slot(4), slot(2), slot(8)}, plan);
  ASSERT_TRUE(std::holds_alternative<std::vector<Assignment>>(result));
  const auto& each = std::get<std::vector<Assignment>>(result);
  ASSERT_EQ(each.size(), 3u);
  const std::vector<int> offsets{0, 4, 6};
  for (std::size_t r = 0; r < each.size(); ++r) {
    EXPECT_EQ(each[r].node_rank, static_cast<int>(r));
    EXPECT_EQ(each[r].rank_offset, offsets[r]);
    EXPECT_EQ(each[r].world_size, 14);
    EXPECT_EQ(each[r].node_count, 3);
    EXPECT_EQ(each[r].generation, Generation{3});
    EXPECT_EQ(each[r].worker_master_addr, "10.0.0.1");
    EXPECT_EQ(each[r].worker_master_port, 29500);
    EXPECT_DOUBLE_EQ(each[r].init_deadline_s, 42.5);
    EXPECT_EQ(each[r].run_id, "run");
    EXPECT_EQ(each[r].run_nonce, "nonce");
    EXPECT_TRUE(each[r].nodes.empty());
  }
}

TEST(JoinRules, TheLaunchersRefusalOrAWorldTooLargeForARankIsTheAnswer) {
  JobPlan refused;
  refused.refusal = "mixed GPU counts";
  const auto launcher_said = assignments_for(Generation{1}, {slot(1)}, refused);
  ASSERT_TRUE(std::holds_alternative<std::string>(launcher_said));
  EXPECT_EQ(std::get<std::string>(launcher_said), "mixed GPU counts");
  const auto too_large = assignments_for(Generation{1}, {slot(2000000000), slot(2000000000)}, JobPlan{});
  ASSERT_TRUE(std::holds_alternative<std::string>(too_large));
  EXPECT_EQ(std::get<std::string>(too_large), "world size too large");
  const auto just_fits = assignments_for(Generation{1}, {slot(2147483646), slot(1)}, JobPlan{});
  ASSERT_TRUE(std::holds_alternative<std::vector<Assignment>>(just_fits));
  EXPECT_EQ(std::get<std::vector<Assignment>>(just_fits)[1].world_size, 2147483647);
}

}  // namespace
}  // namespace ddplaunch::rendezvous
