// A worker that prints a lot before an NCCL-style init error must still be restarted, and its
// root cause printed: the failure report a node sends is bounded (lines cut, total capped),
// so the master never drops the node for an oversized message ("node lost").
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "output_parsing.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::testing::count_of;

constexpr auto kJobBound = 120s;  // two generations of a few MB of output each, on a busy machine

// One node, one worker that prints `noise` (a shell snippet) then an NCCL init error and exits 1
// in every generation; one automatic init restart, so the job ends with the root-cause report.
ddplaunch::testing::RunResult run_noisy_failure(const std::string& noise) {
  const std::string script = noise + "; echo 'NCCL error: unhandled system error (run with NCCL_DEBUG=INFO)'; exit 1";
  return ddplaunch::testing::run_command({DDPLAUNCH_BIN, "--nproc-per-node", "1", "--shim", "none", "--set",
                                          "restart.init_restarts=1", "--grace", "1", "--", "/bin/sh", "-c", script},
                                         kJobBound, {}, {"PYTHONUNBUFFERED"});
}

// What every case must show: a restart, then the root cause with the NCCL line, never a lost node.
void expect_restarted_with_root_cause(const ddplaunch::testing::RunResult& r) {
  ASSERT_FALSE(r.timed_out);
  const std::string tail = r.output.size() > 20000 ? r.output.substr(r.output.size() - 20000) : r.output;
  EXPECT_EQ(r.exit_code, 1) << tail;
  EXPECT_EQ(r.output.find("was lost"), std::string::npos) << tail;
  EXPECT_EQ(r.output.find("exceeds the limit"), std::string::npos) << tail;
  EXPECT_EQ(count_of(r.output, "restart 1 of 1"), 1) << tail;
  auto report_at = r.output.find("JOB FAILED — root cause:");
  ASSERT_NE(report_at, std::string::npos) << tail;
  const std::string report = r.output.substr(report_at);
  EXPECT_NE(report.find("generation 1"), std::string::npos) << report.substr(0, 4000);
  EXPECT_NE(report.find("output matches 'NCCL error: unhandled system error'"), std::string::npos)
      << report.substr(0, 4000);
  EXPECT_NE(report.find("    | NCCL error: unhandled system error"), std::string::npos) << report.substr(0, 4000);
  // The report quotes the output cut down to a readable size.
  EXPECT_LT(report.size(), 70u * 1024) << report.substr(0, 4000);
}

TEST(LongOutput, TwentyFourLongLinesBeforeAnInitErrorStillRestartWithARootCause) {
  // 24 lines of 64000 bytes: the quoted tail alone was 1.2 MB, over the 1 MiB frame limit.
  auto r = run_noisy_failure(
      "awk 'BEGIN { s = \"x\"; while (length(s) < 64000) s = s s; for (i = 0; i < 24; i++) print substr(s, 1, 64000) }'");
  expect_restarted_with_root_cause(r);
  const std::string report = r.output.substr(r.output.find("JOB FAILED — root cause:"));
  EXPECT_NE(report.find("bytes cut)"), std::string::npos) << report.substr(0, 4000);
}

TEST(LongOutput, MegabytesOfCarriageReturnProgressBeforeAnInitErrorStillRestartWithARootCause) {
  // One "line" of 5 MB: 50 progress redraws ('\r') of 100 KB each, then the error on a line of its own.
  auto r = run_noisy_failure(
      "awk 'BEGIN { s = \"#\"; while (length(s) < 100000) s = s s; s = substr(s, 1, 100000); "
      "for (i = 0; i < 50; i++) printf \"\\rstep %d %s\", i, s; print \"\" }'");
  expect_restarted_with_root_cause(r);
}

}  // namespace
