// Which budget a failure spends (DESIGN.md "Phases of a worker"): a program's own
// error in setup, or an exception of its making inside init, restarts only with
// --max-restarts; a failure inside init restarts on the automatic init budget, except when
// the same rank fails the same way twice in a row. And the root cause names the program's
// own error instead of blaming the network.
#include <gtest/gtest.h>

#include <string>

#include "policy/job_policy.h"
#include "policy/program_error.h"
#include "policy/root_cause.h"
#include "policy_decisions.h"

namespace ddplaunch {
namespace {

using testing::count;
using testing::failure;
using testing::find;
using testing::logs;
using Decisions = JobPolicy::Decisions;
const PolicyClock::time_point t0{};

std::vector<rendezvous::NodeRecord> one_node_two_ranks() {
  rendezvous::NodeRecord n;
  n.node_rank = 0;
  n.facts.nproc = 2;
  n.facts.hostname = "host0";
  n.observed_address = "127.0.0.1";
  return {n};
}

PolicySettings settings(int max_restarts = 0, int init_restarts = 3) {
  PolicySettings s;
  s.restart.init_restarts = init_restarts;
  s.restart.max_restarts = max_restarts;
  s.restart.backoff_s = 0;
  s.restart.jitter = 0;
  s.worker_master_addr = "127.0.0.1";
  s.master_is_loopback = true;
  return s;
}

// A Python rank that raised in its own code: the traceback's last lines in its output.
FailureReport python_raised(int rank, FailurePhase phase, const std::string& exception_line) {
  FailureReport r = failure(0, rank, phase, FailureKind::Exited, 1);
  r.failure.tail = {"Traceback (most recent call last):", "  File \"bad.py\", line 2, in <module>",
                    "    import nonexistent_module_xyz", exception_line};
  return r;
}

// Runs one job: every generation's rank 1 fails with `report`; returns the number of
// generations started and the decisions of the last failure.
struct Attempts {
  int generations = 0;
  Decisions last;
};
Attempts fail_every_generation(JobPolicy& policy, const FailureReport& report) {
  Attempts a;
  policy.on_nodes_joined(Generation{0}, one_node_two_ranks(), t0);
  for (int i = 0; i < 10; ++i) {  // bounded: no budget here goes past 10
    ++a.generations;
    a.last = policy.on_worker_failed(0, policy.generation(), report, t0);
    if (!find<decision::ScheduleRestart>(a.last)) break;
    policy.on_backoff_elapsed(policy.generation().next());
    policy.on_nodes_joined(policy.generation(), one_node_two_ranks(), t0);
  }
  return a;
}

TEST(FailurePhases, AnExceptionInSetupEndsAtOnceWithoutMaxRestarts) {
  JobPolicy policy(settings(0));
  Attempts a = fail_every_generation(
      policy, python_raised(1, FailurePhase::Setup, "ModuleNotFoundError: No module named 'nonexistent_module_xyz'"));
  EXPECT_EQ(a.generations, 1);
  ASSERT_TRUE(find<decision::OrderStop>(a.last));
  EXPECT_NE(logs(a.last).find("the program failed with its own error during setup"), std::string::npos) << logs(a.last);
  EXPECT_EQ(policy.budget().used(), 0);
}

TEST(FailurePhases, MaxRestartsTwoGivesExactlyThreeAttemptsForASetupFailure) {
  JobPolicy policy(settings(2));
  Attempts a = fail_every_generation(policy, python_raised(1, FailurePhase::Setup, "ValueError: odd rank"));
  EXPECT_EQ(a.generations, 3);
  EXPECT_EQ(policy.budget().used(), 2);
  EXPECT_NE(logs(a.last).find("not restarting"), std::string::npos) << logs(a.last);
}

TEST(FailurePhases, AProgramWithoutAnyShimReportFailsInSetup) {
  // A non-Python program (no shim, no init report) exiting 3 with no output at all.
  FailureReport r = failure(0, 0, FailurePhase::Setup, FailureKind::Exited, 3, "exited in setup");
  r.failure.tail.clear();
  EXPECT_FALSE(is_init_failure(r.failure));
  JobPolicy policy(settings(0));
  Attempts a = fail_every_generation(policy, r);
  EXPECT_EQ(a.generations, 1);
  EXPECT_EQ(find<decision::OrderStop>(a.last)->exit_code, 3);
}

TEST(FailurePhases, AnExitInsideInitSpendsTheAutomaticInitBudget) {
  JobPolicy policy(settings(0, 3));
  policy.on_nodes_joined(Generation{0}, one_node_two_ranks(), t0);
  auto d = policy.on_worker_failed(0, Generation{0}, failure(0, 1, FailurePhase::Init, FailureKind::Exited, 3, "exited during process-group init"), t0);
  ASSERT_TRUE(find<decision::ScheduleRestart>(d)) << logs(d);
  EXPECT_NE(logs(d).find("restart 1 of 3"), std::string::npos) << logs(d);
}

TEST(FailurePhases, AnInitSignatureInTheOutputOfASetupExitIsAnInitFailure) {
  // The supervisor marks such an exit as init (the signature matched its output).
  FailureReport r = failure(0, 1, FailurePhase::Init, FailureKind::Exited, 1, "output matches 'NCCL error'");
  r.failure.init_signature = "NCCL error: unhandled system error";
  r.failure.tail = {"RuntimeError: NCCL error: unhandled system error"};
  EXPECT_TRUE(is_init_failure(r.failure));
  JobPolicy policy(settings(0, 3));
  policy.on_nodes_joined(Generation{0}, one_node_two_ranks(), t0);
  EXPECT_TRUE(find<decision::ScheduleRestart>(policy.on_worker_failed(0, Generation{0}, r, t0)));
}

TEST(FailurePhases, AProgramExceptionInsideInitIsDeterministicNotAnInitFailure) {
  // init_process_group(backend="bogus"): the shim reported init_begin, then a ValueError.
  FailureReport r = failure(0, 0, FailurePhase::Init, FailureKind::InitFailed, 1,
                            "ValueError: Invalid backend: 'bogus'");
  EXPECT_FALSE(is_init_failure(r.failure));
  JobPolicy policy(settings(0, 3));
  Attempts a = fail_every_generation(policy, r);
  EXPECT_EQ(a.generations, 1);
  EXPECT_NE(logs(a.last).find("its own error during init"), std::string::npos) << logs(a.last);
  // torch's own init errors (RuntimeError, DistNetworkError) stay init failures.
  FailureReport net = failure(0, 0, FailurePhase::Init, FailureKind::InitFailed, 1,
                              "RuntimeError: [gloo] Connection refused");
  EXPECT_TRUE(is_init_failure(net.failure));
}

TEST(FailurePhases, TheSameInitErrorTwiceInARowStopsAsDeterministic) {
  FailureReport r = failure(0, 1, FailurePhase::Init, FailureKind::InitFailed, 1,
                            "ncclCommInitRank failed: unhandled cuda error");
  JobPolicy policy(settings(0, 3));
  Attempts a = fail_every_generation(policy, r);
  EXPECT_EQ(a.generations, 2);
  ASSERT_TRUE(find<decision::OrderStop>(a.last));
  EXPECT_NE(logs(a.last).find("same error during init in generations 0 and 1"), std::string::npos) << logs(a.last);
  EXPECT_NE(logs(a.last).find("deterministic"), std::string::npos) << logs(a.last);
}

TEST(FailurePhases, TheSameErrorIsRetriedWhenTheUserAskedForRestarts) {
  FailureReport r = failure(0, 1, FailurePhase::Init, FailureKind::InitFailed, 1, "ncclCommInitRank failed");
  JobPolicy policy(settings(1, 2));
  Attempts a = fail_every_generation(policy, r);
  EXPECT_EQ(a.generations, 4);  // 2 automatic + 1 asked for, then the budget is spent
}

TEST(FailurePhases, ADifferentErrorOrRankIsNotARepeat) {
  JobPolicy policy(settings(0, 3));
  policy.on_nodes_joined(Generation{0}, one_node_two_ranks(), t0);
  auto first = failure(0, 1, FailurePhase::Init, FailureKind::InitFailed, 1, "error A");
  ASSERT_TRUE(find<decision::ScheduleRestart>(policy.on_worker_failed(0, Generation{0}, first, t0)));
  policy.on_backoff_elapsed(Generation{1});
  policy.on_nodes_joined(Generation{1}, one_node_two_ranks(), t0);
  auto other_rank = failure(0, 0, FailurePhase::Init, FailureKind::InitFailed, 1, "error A");
  EXPECT_TRUE(find<decision::ScheduleRestart>(policy.on_worker_failed(0, Generation{1}, other_rank, t0)));
}

TEST(FailurePhases, InitTimeoutsAreNeverTakenForARepeatedError) {
  JobPolicy policy(settings(0, 2));
  FailureReport r = failure(0, 1, FailurePhase::Init, FailureKind::InitTimeout, 1, "still in init after 10 s");
  Attempts a = fail_every_generation(policy, r);
  EXPECT_EQ(a.generations, 3);
}

TEST(RootCauseOfAProgramError, TheExceptionIsTheHeadlineAndTheNetworkIsNotBlamed) {
  FailureReport r =
      python_raised(1, FailurePhase::Setup, "ModuleNotFoundError: No module named 'nonexistent_module_xyz'");
  const std::string text = describe_root_cause(r, 0, Generation{0}, "0 of 3");
  const std::string headline = text.substr(0, text.find('\n'));
  EXPECT_NE(headline.find("during setup"), std::string::npos) << text;
  EXPECT_NE(headline.find("ModuleNotFoundError: No module named 'nonexistent_module_xyz'"), std::string::npos) << text;
  EXPECT_EQ(text.find("NCCL_SOCKET_IFNAME"), std::string::npos) << text;
  EXPECT_EQ(text.find("MASTER_ADDR"), std::string::npos) << text;
  EXPECT_NE(text.find("not a network"), std::string::npos) << text;
}

TEST(RootCauseOfAProgramError, ARealInitFailureStillGetsTheNetworkAdvice) {
  FailureReport r = failure(0, 1, FailurePhase::Init, FailureKind::InitFailed, 1, "ncclCommInitRank failed");
  const std::string text = describe_root_cause(r, 0, Generation{0}, "3 of 3");
  EXPECT_NE(text.find("NCCL_SOCKET_IFNAME"), std::string::npos) << text;
}

TEST(RootCauseOfAProgramError, ARecordedErrorFileMessageIsTheHeadline) {
  FailureReport r = failure(0, 1, FailurePhase::Runtime, FailureKind::Exited, 1,
                            "ValueError: bad batch size\n  File \"train.py\", line 9, in main");
  const std::string text = describe_root_cause(r, 0, Generation{0}, "0 of 0");
  EXPECT_NE(text.substr(0, text.find('\n')).find("ValueError: bad batch size"), std::string::npos) << text;
  EXPECT_NE(text.find("raised ValueError after initialisation"), std::string::npos) << text;
}

TEST(PythonException, ReadsTheLastExceptionLineOfATraceback) {
  WorkerFailure f;
  f.tail = {"Traceback (most recent call last):", "  File \"x.py\", line 1, in <module>",
            "torch.distributed.DistNetworkError: Connection reset by peer", "some later line: not an error"};
  auto e = python_exception(f);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, "DistNetworkError");
  EXPECT_EQ(e->message, "Connection reset by peer");
  EXPECT_FALSE(is_program_exception_type(e->type));
}

TEST(PythonException, OrdinaryKeyValueOutputIsNoException) {
  WorkerFailure f;
  f.tail = {"loss: 0.5", "Epoch: 3", "progress 10%"};
  EXPECT_FALSE(python_exception(f));
  EXPECT_EQ(error_line(f), "progress 10%");
}

TEST(PythonException, TheErrorFileSummaryComesBeforeTheTail) {
  WorkerFailure f;
  f.detail = "KeyError: 'lr'\n  File \"t.py\", line 3";
  f.tail = {"RuntimeError: something printed earlier"};
  auto e = python_exception(f);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, "KeyError");
  EXPECT_TRUE(is_program_exception_type(e->type));
  EXPECT_EQ(error_line(f), "KeyError: 'lr'");
}

}  // namespace
}  // namespace ddplaunch
