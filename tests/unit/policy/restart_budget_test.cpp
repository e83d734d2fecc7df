// RestartBudget driven directly: which budget a failure spends, when there is none left,
// the kinds that never restart, the deterministic-failure rule and the backoff. Pure.
#include <gtest/gtest.h>

#include <string>

#include "policy/restart_budget.h"

namespace {

using namespace ddplaunch;

RestartSettings budgets(int init_restarts, int max_restarts) {
  RestartSettings r;
  r.init_restarts = init_restarts;
  r.max_restarts = max_restarts;
  r.backoff_s = 0;
  r.jitter = 0;
  return r;
}

// A rank that timed out in init (an init failure) or raised in runtime, with its own last line.
WorkerFailure init_timeout(int rank) {
  WorkerFailure f;
  f.global_rank = rank;
  f.phase = FailurePhase::Init;
  f.kind = FailureKind::InitTimeout;
  return f;
}

WorkerFailure runtime_error(int rank, std::string line = "RuntimeError: boom") {
  WorkerFailure f;
  f.global_rank = rank;
  f.phase = FailurePhase::Runtime;
  f.kind = FailureKind::Exited;
  f.status = ExitStatus{false, 1, 0, false};
  f.tail = {std::move(line)};
  return f;
}

TEST(RestartBudget, InitFailuresSpendTheInitBudgetFirstThenMaxRestarts) {
  RestartBudget budget(budgets(1, 1), HangAction::Stop, 1);
  EXPECT_EQ(budget.total(), 2);
  RestartVerdict first = budget.spend_on(init_timeout(0), Generation{0});
  EXPECT_TRUE(first.restart);
  EXPECT_EQ(first.budget, 2);  // init_restarts + max_restarts for an init failure
  EXPECT_EQ(budget.text(), "1 of 2 (automatic init restarts 1 of 1, --max-restarts 0 of 1)");
  EXPECT_TRUE(budget.spend_on(init_timeout(0), Generation{1}).restart);
  EXPECT_EQ(budget.text(), "2 of 2 (automatic init restarts 1 of 1, --max-restarts 1 of 1)");
  EXPECT_EQ(budget.init_failure_restarts(), 2);
  RestartVerdict spent = budget.spend_on(init_timeout(0), Generation{2});
  EXPECT_FALSE(spent.restart);
  EXPECT_EQ(spent.refusal, "all 1 automatic init restarts and all 1 --max-restarts used");
  EXPECT_EQ(budget.used(), 2);  // a refusal spends nothing
}

TEST(RestartBudget, RuntimeFailuresRestartOnlyWithMaxRestartsAndDoNotGrowTheInitDeadline) {
  RestartBudget none(budgets(3, 0), HangAction::Stop, 1);
  RestartVerdict refused = none.spend_on(runtime_error(1), Generation{0});
  EXPECT_FALSE(refused.restart);
  EXPECT_EQ(refused.refusal, "all 0 --max-restarts used (runtime failures restart only with --max-restarts)");

  RestartBudget one(budgets(3, 1), HangAction::Stop, 1);
  RestartVerdict verdict = one.spend_on(runtime_error(1), Generation{0});
  EXPECT_TRUE(verdict.restart);
  EXPECT_EQ(verdict.budget, 1);  // only --max-restarts pays for a runtime failure
  EXPECT_EQ(one.init_failure_restarts(), 0);
}

TEST(RestartBudget, AProgramErrorInSetupIsNoInitFailure) {
  RestartBudget budget(budgets(3, 0), HangAction::Stop, 1);
  WorkerFailure setup = runtime_error(0, "ImportError: no module named foo");
  setup.phase = FailurePhase::Setup;
  RestartVerdict verdict = budget.spend_on(setup, Generation{0});
  EXPECT_FALSE(verdict.restart);
  EXPECT_EQ(verdict.refusal,
            "the program failed with its own error during setup (not an init failure: no automatic restart); 0 "
            "--max-restarts used of 0");
}

TEST(RestartBudget, ASpawnFailureNeverRestartsAndAHangOnlyUnderHangActionRestart) {
  RestartBudget budget(budgets(3, 3), HangAction::Stop, 1);
  WorkerFailure spawn = init_timeout(0);
  spawn.kind = FailureKind::SpawnFailed;
  EXPECT_EQ(budget.spend_on(spawn, Generation{0}).refusal, "the program could not be started (not restartable)");
  WorkerFailure hang = runtime_error(0);
  hang.kind = FailureKind::Hang;
  EXPECT_EQ(budget.spend_on(hang, Generation{0}).refusal,
            "hang.action is stop (auto without --max-restarts); --hang-action restart restarts");
  RestartBudget restarting(budgets(3, 3), HangAction::Restart, 1);
  EXPECT_TRUE(restarting.spend_on(hang, Generation{0}).restart);
}

TEST(RestartBudget, RestartOnLimitsTheKinds) {
  RestartSettings r = budgets(3, 3);
  r.on_runtime_failure = false;
  RestartBudget budget(r, HangAction::Stop, 1);
  EXPECT_EQ(budget.spend_on(runtime_error(0), Generation{0}).refusal, "restart.restart_on does not include runtime");
  EXPECT_TRUE(budget.spend_on(init_timeout(0), Generation{0}).restart);
}

TEST(RestartBudget, TheSameErrorOfTheSameRankInTheNextGenerationIsDeterministic) {
  RestartBudget budget(budgets(3, 0), HangAction::Stop, 1);
  WorkerFailure failure;
  failure.global_rank = 2;
  failure.phase = FailurePhase::Init;
  failure.kind = FailureKind::Exited;
  failure.status = ExitStatus{false, 1, 0, false};
  failure.detail = "init signature: NCCL error: unhandled system error";
  ASSERT_TRUE(budget.spend_on(failure, Generation{0}).restart);
  RestartVerdict again = budget.spend_on(failure, Generation{1});
  EXPECT_FALSE(again.restart);
  EXPECT_NE(again.refusal.find("rank 2 failed with the same error during init in generations 0 and 1"),
            std::string::npos)
      << again.refusal;
  // Not in the generation right after: no repeat.
  RestartBudget later(budgets(3, 0), HangAction::Stop, 1);
  ASSERT_TRUE(later.spend_on(failure, Generation{0}).restart);
  EXPECT_TRUE(later.spend_on(failure, Generation{2}).restart);
}

TEST(RestartBudget, TimeoutsAreNeverDeterministic) {
  RestartBudget budget(budgets(3, 0), HangAction::Stop, 1);
  EXPECT_TRUE(budget.spend_on(init_timeout(0), Generation{0}).restart);
  EXPECT_TRUE(budget.spend_on(init_timeout(0), Generation{1}).restart);
}

TEST(RestartBudget, TheBackoffDoublesUpToItsCeilingAndTheJitterIsSeeded) {
  RestartSettings r = budgets(5, 0);
  r.backoff_s = 2;
  r.backoff_max_s = 5;
  RestartBudget budget(r, HangAction::Stop, 1);
  EXPECT_DOUBLE_EQ(budget.spend_on(init_timeout(0), Generation{0}).backoff_s, 2);
  EXPECT_DOUBLE_EQ(budget.spend_on(init_timeout(0), Generation{1}).backoff_s, 4);
  EXPECT_DOUBLE_EQ(budget.spend_on(init_timeout(0), Generation{2}).backoff_s, 5);

  r.jitter = 0.5;
  RestartBudget a(r, HangAction::Stop, 7), b(r, HangAction::Stop, 7);
  const double drawn = a.spend_on(init_timeout(0), Generation{0}).backoff_s;
  EXPECT_GE(drawn, 2);
  EXPECT_LE(drawn, 3);
  EXPECT_DOUBLE_EQ(b.spend_on(init_timeout(0), Generation{0}).backoff_s, drawn);
}

}  // namespace
