// JobFailures driven directly: the first failure of a generation, the count, each node's last
// error, the worker port at fault, and the program's store on the rendezvous port. Pure.
#include <gtest/gtest.h>

#include <string>

#include "policy/job_failures.h"

namespace {

using namespace ddplaunch;

FailureReport failure(int node, int rank, std::string detail = "", std::string tail = "boom") {
  FailureReport r;
  r.host = "host" + std::to_string(node);
  r.failure.node_rank = node;
  r.failure.global_rank = rank;
  r.failure.phase = FailurePhase::Runtime;
  r.failure.kind = FailureKind::Exited;
  r.failure.status = ExitStatus{false, 1, 0, false};
  r.failure.detail = std::move(detail);
  r.failure.tail = {std::move(tail)};
  return r;
}

TEST(JobFailures, TheFirstFailureOfAGenerationIsTheRootCause) {
  JobFailures failures;
  EXPECT_EQ(failures.root_cause(Generation{0}, "0 of 0"), "");
  EXPECT_TRUE(failures.record(1, failure(1, 3)));
  EXPECT_FALSE(failures.record(0, failure(0, 0)));
  ASSERT_TRUE(failures.first());
  EXPECT_EQ(failures.first()->failure.global_rank, 3);
  EXPECT_FALSE(failures.last_error(1).empty());
  EXPECT_EQ(failures.last_error(5), "");
  const std::string cause = failures.root_cause(Generation{0}, "0 of 0");
  EXPECT_NE(cause.find("rank 3"), std::string::npos) << cause;
  failures.new_generation();
  EXPECT_FALSE(failures.first());
  EXPECT_TRUE(failures.record(0, failure(0, 0)));
}

TEST(JobFailures, APersonsDecisionReplacesTheRootCause) {
  JobFailures failures;
  failures.record(0, failure(0, 0));
  failures.record_as_root_cause(failure(1, 2));
  EXPECT_EQ(failures.first()->failure.global_rank, 2);
}

TEST(JobFailures, APortInUseIsToldOnce) {
  JobFailures failures;
  failures.record(0, failure(0, 0, "", "RuntimeError: The server socket has failed to listen: EADDRINUSE"));
  EXPECT_TRUE(failures.take_port_at_fault());
  EXPECT_FALSE(failures.take_port_at_fault());
  failures.record(0, failure(0, 0, "OSError: Address already in use"));
  EXPECT_TRUE(failures.take_port_at_fault());
}

TEST(JobFailures, AStoreOnTheRendezvousPortIsNamedOnceAndInTheRootCause) {
  JobFailures failures;
  auto note = failures.note_foreign_store_client("10.0.0.2:5555", 29400);
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("connected to ddplaunch's rendezvous port 29400"), std::string::npos) << *note;
  EXPECT_FALSE(failures.note_foreign_store_client("10.0.0.3:5555", 29400));  // said once
  failures.record(0, failure(0, 0));
  EXPECT_NE(failures.root_cause(Generation{0}, "0 of 0").find("  note: a worker's c10d TCPStore client (10.0.0.3:5555)"),
            std::string::npos);
}

TEST(JobFailures, RankZeroFailingToBindTheRendezvousPortIsTheSameMistake) {
  JobFailures failures;
  failures.set_rendezvous_port(29400);
  failures.record(0, failure(0, 0, "", "failed to bind to [::]:29400 (errno: 98 - Address already in use)"));
  EXPECT_NE(failures.root_cause(Generation{0}, "0 of 0").find("rank 0 could not host its c10d TCPStore on port 29400"),
            std::string::npos);
}

}  // namespace
