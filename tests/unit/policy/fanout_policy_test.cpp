// The fan-out's own rules (policy/fanout_policy), driven directly: a node's session ends,
// what is said, whose status is the job's, and when the others are stopped.
#include <gtest/gtest.h>

#include "ddplaunch/base/exit_codes.h"
#include "policy/fanout_policy.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;

ExitStatus exited(int code) { return ExitStatus{false, code, 0, false}; }
ExitStatus killed(int signal) { return ExitStatus{true, 0, signal, false}; }

TEST(FanoutPolicy, TheMasterNodesStatusIsTheJobs) {
  auto d = decide_fanout_node_end({0, exited(3), false, 0});
  ASSERT_TRUE(d.job_exit_code);
  EXPECT_EQ(*d.job_exit_code, 3);
  EXPECT_FALSE(d.stop_others_after) << "nobody is left to stop";
  EXPECT_EQ(fanout_exit_code(d.job_exit_code), 3);
  EXPECT_EQ(fanout_exit_code(std::nullopt), kExitFailure) << "no master status: a failure";
}

TEST(FanoutPolicy, AFailedNodeStopsTheOthersAfterTheSettle) {
  auto d = decide_fanout_node_end({1, exited(1), false, 2});
  EXPECT_FALSE(d.job_exit_code);
  EXPECT_EQ(d.say, FanoutEndDecision::Say::Info);
  ASSERT_TRUE(d.stop_others_after);
  EXPECT_EQ(*d.stop_others_after, 5s);
}

TEST(FanoutPolicy, ASuccessOrAnEndDuringAStopStopsNobody) {
  auto ok = decide_fanout_node_end({1, exited(0), false, 2});
  EXPECT_EQ(ok.say, FanoutEndDecision::Say::Nothing);
  EXPECT_FALSE(ok.stop_others_after);
  auto stopping = decide_fanout_node_end({1, exited(143), true, 2});
  EXPECT_EQ(stopping.say, FanoutEndDecision::Say::Nothing);
  EXPECT_FALSE(stopping.stop_others_after);
}

TEST(FanoutPolicy, AnSshFailureIsAnErrorAndNeverTheMastersCode) {
  EXPECT_TRUE(ssh_session_failed(exited(255)));
  EXPECT_TRUE(ssh_session_failed(killed(9)));
  EXPECT_FALSE(ssh_session_failed(exited(1)));
  auto d = decide_fanout_node_end({0, exited(255), true, 1});
  EXPECT_EQ(d.say, FanoutEndDecision::Say::Error) << "said even while stopping";
  ASSERT_TRUE(d.job_exit_code);
  EXPECT_EQ(*d.job_exit_code, kExitFailure);
}

TEST(FanoutPolicy, AStoppedNodeIsGivenUpFifteenSecondsPastTheGrace) {
  EXPECT_DOUBLE_EQ(fanout_stop_bound_s(10), 25);
}

}  // namespace
}  // namespace ddplaunch
