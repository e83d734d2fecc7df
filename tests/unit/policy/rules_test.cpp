// Rules that used to be decided in the shells with the clock, now pure and driven here with
// explicit times: a condition that must hold for a while (SustainedCondition), the etcd
// coordinator's partition rule (MinorityRule), and when a wrong socket interface is only a
// warning. (When a learnt step interval is worth a save of its own: job_policy_test.cpp.)
#include <gtest/gtest.h>

#include <chrono>

#include "policy/minority_rule.h"
#include "policy/node_checks.h"
#include "policy/sustained_condition.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;
const PolicyClock::time_point t0{};

TEST(SustainedCondition, CountsOnlyAfterHoldingWithoutABreakForTheBound) {
  SustainedCondition c(3s);
  EXPECT_FALSE(c.observe(true, t0));
  EXPECT_FALSE(c.observe(true, t0 + 2999ms));
  EXPECT_TRUE(c.observe(true, t0 + 3s));
  EXPECT_FALSE(c.observe(false, t0 + 4s));  // a break starts it over
  EXPECT_FALSE(c.observe(true, t0 + 5s));
  EXPECT_FALSE(c.observe(true, t0 + 7s));
  EXPECT_TRUE(c.observe(true, t0 + 8s));
}

TEST(MinorityRule, ACoordinatorCutOffWithAtMostHalfOfItsLaunchersStepsDownOnceThatHeldForTheBound) {
  MinorityRule rule;
  EXPECT_FALSE(rule.check(false, 4, t0));      // four launchers joined, etcd answers
  EXPECT_FALSE(rule.check(true, 2, t0 + 1s));  // etcd gone, half of them too: not yet
  EXPECT_FALSE(rule.check(true, 2, t0 + 1s + MinorityRule::kConfirm - 1ms));
  auto why = rule.check(true, 2, t0 + 1s + MinorityRule::kConfirm);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("2 of 4 still joined"), std::string::npos) << *why;
  EXPECT_NE(why->find("minority side of a partition"), std::string::npos) << *why;
}

// etcd stops answering on the majority side too while it elects a new leader: the minority
// must hold for the whole bound, and a coordinator that keeps more than half goes on.
TEST(MinorityRule, TheMajoritySideAndABriefMinorityGoOn) {
  MinorityRule rule;
  rule.check(false, 5, t0);
  EXPECT_FALSE(rule.check(true, 3, t0 + 1s));   // 3 of 5: the majority
  EXPECT_FALSE(rule.check(true, 3, t0 + 60s));
  EXPECT_FALSE(rule.check(true, 2, t0 + 61s));  // 2 of 5 for five seconds, then etcd answers
  EXPECT_FALSE(rule.check(true, 2, t0 + 66s));
  EXPECT_FALSE(rule.check(false, 2, t0 + 67s));
  EXPECT_FALSE(rule.check(true, 2, t0 + 70s));  // the clock starts again
  EXPECT_FALSE(rule.check(true, 2, t0 + 75s));
  EXPECT_TRUE(rule.check(true, 2, t0 + 76s));
}

TEST(MinorityRule, ALoneLauncherOrAHealthyEtcdNeverStepsDown) {
  MinorityRule alone;
  EXPECT_FALSE(alone.check(true, 1, t0));
  EXPECT_FALSE(alone.check(true, 1, t0 + 1h));
  MinorityRule healthy;
  healthy.check(false, 4, t0);
  EXPECT_FALSE(healthy.check(false, 1, t0 + 1s));
  EXPECT_FALSE(healthy.check(false, 1, t0 + 1h));
}

TEST(NodeChecks, AWrongNcclInterfaceIsOnlyAWarningWhereNcclCannotRun) {
  EXPECT_EQ(judge_socket_ifname_problem("NCCL_SOCKET_IFNAME", false), IfnameProblem::WarnOnly);
  EXPECT_EQ(judge_socket_ifname_problem("NCCL_SOCKET_IFNAME", true), IfnameProblem::Refuse);
  EXPECT_EQ(judge_socket_ifname_problem("GLOO_SOCKET_IFNAME", false), IfnameProblem::Refuse);
  EXPECT_EQ(judge_socket_ifname_problem("GLOO_SOCKET_IFNAME", true), IfnameProblem::Refuse);
}

}  // namespace
}  // namespace ddplaunch
