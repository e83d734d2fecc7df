// Real NCCL under ddplaunch's preload shim: without a usable GPU, NCCL's own init failure is
// reported by the shim, classified as an init failure, restarted once, and quoted in the final
// report. On a machine where NCCL init succeeds, the same job must simply succeed.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "output_parsing.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::testing::count_of;

TEST(NcclRestart, RealNcclInitFailureIsReportedRestartedAndQuoted) {
#ifndef NCCL_PROBE_BIN
  GTEST_SKIP() << "built without NCCL (no nccl_probe target)";
#else
  auto r = ddplaunch::testing::run_command({DDPLAUNCH_BIN, "--nproc-per-node", "1", "--shim", "preload",
                                            "--set", "restart.init_restarts=1", "--grace", "1", "--", NCCL_PROBE_BIN},
                                           120s);
  ASSERT_FALSE(r.timed_out) << r.output;
  if (r.exit_code == 0) {
    // NCCL initialised for real (a GPU is present): one generation, no restart.
    EXPECT_NE(r.output.find("ncclCommInitRank: no error"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("restarting the whole group"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("job succeeded"), std::string::npos) << r.output;
    return;
  }
  // One failure per generation (0 and 1), each reported by the shim from inside ncclCommInitRank
  // (the probe's own line may be cut off when the restart stops it first).
  EXPECT_EQ(count_of(r.output, "error: failure: rank 0 on node 0"), 2) << r.output;
  EXPECT_EQ(count_of(r.output, "restart 1 of 1"), 1) << r.output;
  EXPECT_EQ(count_of(r.output, "restart 2 of"), 0) << r.output;
  auto report_at = r.output.find("JOB FAILED — root cause:");
  ASSERT_NE(report_at, std::string::npos) << r.output;
  const std::string report = r.output.substr(report_at);
  EXPECT_NE(report.find("during init in generation 1"), std::string::npos) << report;
  EXPECT_NE(report.find("restarts used: 1 of 1"), std::string::npos) << report;
  // NCCL's own words, as the shim or the program's output carried them.
  EXPECT_TRUE(report.find("unhandled cuda error") != std::string::npos ||
              report.find("CUDA driver version is insufficient") != std::string::npos)
      << report;
  // The shim, not an output signature, classified it: the error is the intercepted call's result.
  EXPECT_NE(report.find("reported an init failure"), std::string::npos) << report;
  EXPECT_NE(report.find("error: ncclCommInitRank failed"), std::string::npos) << report;
#endif
}

}  // namespace
