// How a worker's unsuccessful exit is named, without processes: the phase its shim last
// reported, an init error in its output, a shim's init_failed, and a rank's recorded error.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "worker_test_access.h"
#include "supervise/failed_exit.h"

using namespace ddplaunch;

namespace {

struct FailedWorker {
  boost::asio::io_context io;
  Worker worker{io, 0, 3};
};

}  // namespace

TEST(FailedExit, ExitInSetupIsTheProgramsOwnFailure) {
  FailedWorker w;
  const FailedExit exit = classify_failed_exit(w.worker, RankPhase::Setup, std::nullopt);
  EXPECT_EQ(exit.phase, FailurePhase::Setup);
  EXPECT_EQ(exit.kind, FailureKind::Exited);
  EXPECT_EQ(exit.detail, "exited in setup, before it called init_process_group");
  EXPECT_EQ(exit.init_signature, "");
}

TEST(FailedExit, ExitInInitOrRunningKeepsThatPhase) {
  FailedWorker w;
  const FailedExit in_init = classify_failed_exit(w.worker, RankPhase::Init, std::nullopt);
  EXPECT_EQ(in_init.phase, FailurePhase::Init);
  EXPECT_EQ(in_init.detail, "exited during process-group init");
  const FailedExit running = classify_failed_exit(w.worker, RankPhase::Running, std::nullopt);
  EXPECT_EQ(running.phase, FailurePhase::Runtime);
  EXPECT_EQ(running.kind, FailureKind::Exited);
  EXPECT_EQ(running.detail, "");
}

TEST(FailedExit, InitErrorInOutputMakesARunningRankAnInitFailure) {
  FailedWorker w;
  WorkerTestAccess::remember(w.worker, "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error");
  const FailedExit exit = classify_failed_exit(w.worker, RankPhase::Running, std::nullopt);
  EXPECT_EQ(exit.phase, FailurePhase::Init);
  EXPECT_EQ(exit.kind, FailureKind::Exited);
  EXPECT_FALSE(exit.init_signature.empty());
  EXPECT_EQ(exit.detail, "output matches '" + exit.init_signature + "'");
}

TEST(FailedExit, ShimsInitFailedIsTheDetailUnlessTheRankRecordedItsError) {
  FailedWorker w;
  WorkerTestAccess::set_init_failure_detail(w.worker, "NCCL error: unhandled system error");
  const FailedExit reported = classify_failed_exit(w.worker, RankPhase::Running, std::nullopt);
  EXPECT_EQ(reported.phase, FailurePhase::Init);
  EXPECT_EQ(reported.kind, FailureKind::InitFailed);
  EXPECT_EQ(reported.detail, "NCCL error: unhandled system error");
  const FailedExit recorded = classify_failed_exit(w.worker, RankPhase::Running, std::string("ValueError: bad batch"));
  EXPECT_EQ(recorded.kind, FailureKind::InitFailed);
  EXPECT_EQ(recorded.detail, "ValueError: bad batch");
}
