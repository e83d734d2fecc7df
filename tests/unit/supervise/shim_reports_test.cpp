// The shims' reports applied to a worker's record, in a real loop but without children: the
// worker is this test process, so its own reports come from the rank's process tree.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "worker_test_access.h"
#include "supervise/shim_reports.h"

using namespace ddplaunch;
using namespace std::chrono_literals;

namespace {

class Reports {
 public:
  Reports() {
    callbacks_.on_phases_changed = [this] { ++phase_changes; };
    assignment_.generation = Generation{2};
    auto worker = std::make_shared<Worker>(io, 0, 5);
    WorkerTestAccess::set_pid(*worker, ::getpid());
    workers_.push_back(worker);
  }

  static contract::StatusMessage report(contract::StatusEvent event, contract::GenerationNumber generation = 2,
                                       long pid = ::getpid()) {
    contract::StatusMessage m;
    m.event = event;
    m.rank = 5;
    m.generation = generation;
    m.pid = pid;
    m.detail = event == contract::StatusEvent::InitFailed ? "NCCL error: unhandled system error" : "";
    return m;
  }
  Worker& worker() { return *workers_.front(); }

  boost::asio::io_context io;
  int phase_changes = 0;
  std::vector<int> init_failed;  // ranks reported through on_init_failed

 private:
  GroupCallbacks callbacks_;
  WorkerList workers_;
  NodeAssignment assignment_;

 public:
  ShimReports reports{io, callbacks_, workers_, assignment_, [this](Worker& w) { init_failed.push_back(w.global_rank); }};
};

}  // namespace

TEST(ShimReports, InitBeginThenInitOkMovesTheWorkerThroughInitToRunning) {
  Reports r;
  r.reports.handle(Reports::report(contract::StatusEvent::InitBegin));
  EXPECT_EQ(r.worker().phases.phase(), RankPhase::Init);
  EXPECT_EQ(r.worker().phases.init_entries(), 1);
  r.reports.handle(Reports::report(contract::StatusEvent::InitOk));
  EXPECT_EQ(r.worker().phases.phase(), RankPhase::Running);
  EXPECT_EQ(r.phase_changes, 2);
}

TEST(ShimReports, ReportsOfAnotherGenerationOrFromOutsideTheRanksProcessesAreDropped) {
  Reports r;
  r.reports.handle(Reports::report(contract::StatusEvent::InitBegin, 1));
  EXPECT_EQ(r.worker().phases.phase(), RankPhase::Setup);
  r.reports.handle(Reports::report(contract::StatusEvent::InitBegin, 2, 1));  // pid 1: not this rank's
  EXPECT_EQ(r.worker().phases.phase(), RankPhase::Setup);
  EXPECT_TRUE(WorkerTestAccess::foreign_report_seen(r.worker()));
  EXPECT_EQ(r.phase_changes, 0);
}

TEST(ShimReports, InitFailedIsReportedAfterTheSettleWhenTheWorkerLingers) {
  Reports r;
  r.reports.handle(Reports::report(contract::StatusEvent::InitFailed));
  EXPECT_EQ(r.worker().phases.init_failure_detail(), "NCCL error: unhandled system error");
  EXPECT_TRUE(r.init_failed.empty()) << "reported before its settle time";
  r.io.run_for(800ms);
  EXPECT_EQ(r.init_failed, std::vector<int>{5});
}

TEST(ShimReports, CancelledSettleReportsNothing) {
  Reports r;
  r.reports.handle(Reports::report(contract::StatusEvent::InitFailed));
  r.reports.cancel();
  r.io.run_for(800ms);
  EXPECT_TRUE(r.init_failed.empty());
}

TEST(ShimReports, InitGraceCountsAWorkerWithoutAShimAsRunning) {
  Reports r;
  r.reports.start(0.05);
  r.io.run_for(300ms);
  EXPECT_EQ(r.worker().phases.phase(), RankPhase::Running);
}

TEST(ShimReports, InitGraceLeavesAWorkerThatReportedInitAlone) {
  Reports r;
  r.reports.handle(Reports::report(contract::StatusEvent::InitBegin));
  r.reports.start(0.05);
  r.io.run_for(300ms);
  EXPECT_EQ(r.worker().phases.phase(), RankPhase::Init);
}
