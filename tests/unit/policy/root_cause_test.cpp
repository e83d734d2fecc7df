// The root cause text (policy/root_cause): the failed rank, its node, host, phase, status,
// error and last output lines, and advice that fits the failure.
#include <gtest/gtest.h>

#include <string>

#include "policy/root_cause.h"
#include "policy_decisions.h"

namespace ddplaunch {
namespace {

using testing::failure;

TEST(RootCause, NamesRankNodeHostPhaseStatusErrorAndOutput) {
  FailureReport r;
  r.host = "gpu07";
  r.failure.node_rank = 1;
  r.failure.global_rank = 5;
  r.failure.local_rank = 1;
  r.failure.pid = 4321;
  r.failure.kind = FailureKind::Exited;
  r.failure.status = ExitStatus{true, 0, 11, true};
  r.failure.detail = "NCCL error: unhandled system error";
  r.failure.tail = {"loading", "boom"};
  std::string text = describe_root_cause(r, 2, Generation{3}, "3 of 3");
  for (const char* needle : {"rank 5 (local rank 1) on node 1 (gpu07), pid 4321", "killed by signal 11 (SIGSEGV)",
                             "during init in generation 3", "error: NCCL error: unhandled system error",
                             "restarts used: 3 of 3; other failures: 2", "last 2 output lines of rank 5", "    | boom"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  EXPECT_EQ(failure_exit_code(r.failure), 139);
}

TEST(RootCause, ASpawnOutOfResourcesIsNotBlamedOnThePath) {
  FailureReport r = failure(0, 3, FailurePhase::Init, FailureKind::SpawnNoResources, 127, "EMFILE");
  std::string text = describe_root_cause(r, 0, Generation{0}, "0 of 3");
  EXPECT_NE(text.find("ran out of resources"), std::string::npos) << text;
  EXPECT_NE(text.find("ulimit -n"), std::string::npos) << text;
  EXPECT_EQ(text.find("program path or permissions"), std::string::npos) << text;
}

}  // namespace
}  // namespace ddplaunch
