// The job's timeline with real launchers and real torch/gloo DDP workers: a 2-node job with
// one group restart writes Chrome Trace Event JSON (checked here: every rank's phases in both
// generations, the failure linked to the restart it caused, the nodes named) and the HTML page,
// which real headless Chromium opens and draws (tests/integration/support/check_timeline_page.py);
// `ddplaunch timeline` rewrites them from the --log-dir, and takes a running job's from its master.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "launcher_test_env.h"
#include "multi_node_job.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::string kScripts = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/";
const std::string kPageChecker = std::string(SOURCE_DIR) + "/tests/integration/support/check_timeline_page.py";

bool python_has_torch() { return dt::torch_available(PYTHON_WITH_TORCH); }

struct TempDir {
  std::string path = dt::temp_dir("timeline-test-");
  ~TempDir() { fs::remove_all(path); }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The slices ("X") of one lane, by generation then name: {generation: {name: count}}.
std::map<int, std::multiset<std::string>> lane_slices(const Json& trace, int pid, int tid) {
  std::map<int, std::multiset<std::string>> slices;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == pid && e["tid"] == tid) slices[e["args"]["generation"].get<int>()].insert(e["name"]);
  return slices;
}

const Json* find_event(const Json& trace, const std::string& ph, const std::string& name, int pid) {
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == ph && e["name"] == name && e["pid"] == pid) return &e;
  return nullptr;
}

// The slices of one lane never overlap, and every time is on the trace's clock (≥ 0).
void expect_lane_in_order(const Json& trace, int pid, int tid) {
  std::vector<std::pair<double, double>> spans;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == pid && e["tid"] == tid)
      spans.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    EXPECT_GE(spans[i].first, 0) << "pid " << pid << " tid " << tid;
    if (i > 0) EXPECT_LE(spans[i - 1].second, spans[i].first + 1) << "pid " << pid << " tid " << tid;
  }
}

}  // namespace

TEST(Timeline, TwoNodeJobWithARestartGivesATraceAndAPageChromiumDraws) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  TempDir dir;
  const std::string trace_path = dir.path + "/job.json";
  const std::string log_dir = dir.path + "/logs";
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "timeline-restart", {"--max-restarts", "1"});
  const std::vector<std::string> program{PYTHON_WITH_TORCH, kScripts + "ddp_fail_once.py", "--fail-rank", "3"};
  auto results = dt::run_job_nodes({dt::node_argv(job, 0, 2, {"--trace", trace_path, "--log-dir", log_dir}, program),
                                    dt::node_argv(job, 1, 2, {}, program)},
                                   240s);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_FALSE(r.timed_out) << r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  EXPECT_NE(results[0].output.find("the job's timeline: " + trace_path), std::string::npos) << results[0].output;

  ASSERT_TRUE(fs::exists(trace_path)) << results[0].output;
  const Json trace = Json::parse(read_file(trace_path));
  EXPECT_EQ(trace["otherData"]["exit_code"], 0);
  EXPECT_EQ(trace["otherData"]["generations"], 2);
  EXPECT_EQ(trace["otherData"]["dropped_events"], 0);
  // The time account rides along: one restart that lost time and recovered, and a share of
  // training below the whole (this short program may end right after its ranks' first steps).
  const auto& account = trace["otherData"]["time_account"];
  ASSERT_TRUE(account.is_object()) << trace["otherData"];
  ASSERT_EQ(account["restarts"].size(), 1u) << account;
  EXPECT_TRUE(account["restarts"][0]["recovered"].get<bool>()) << account;
  EXPECT_GT(account["restarts"][0]["lost_s"].get<double>(), 0.0) << account;
  EXPECT_LT(account["effective_training_share"].get<double>(), 1.0) << account;
  EXPECT_NE(trace["otherData"]["root_cause"].get<std::string>().find("rank 3"), std::string::npos) << trace["otherData"];

  // Every rank (pid = node + 1, tid = rank + 1) went through setup, init and running in both
  // generations; rank 3 exited 1 in generation 0, the others were stopped for the restart.
  for (int rank = 0; rank < 4; ++rank) {
    const int pid = rank / 2 + 1, tid = rank + 1;
    auto slices = lane_slices(trace, pid, tid);
    for (int generation : {0, 1})
      for (const char* phase : {"setup", "init", "running"})
        EXPECT_EQ(slices[generation].count(phase), 1u) << "rank " << rank << " generation " << generation << " " << phase;
    expect_lane_in_order(trace, pid, tid);
  }
  const Json* exited = find_event(trace, "i", "exited:1", 2);
  ASSERT_NE(exited, nullptr);
  EXPECT_EQ((*exited)["tid"], 4);
  EXPECT_NE(find_event(trace, "i", "killed:SIGTERM", 1), nullptr);  // node 0's ranks stopped for the restart
  EXPECT_NE(find_event(trace, "i", "exited:0", 1), nullptr);
  EXPECT_NE(find_event(trace, "X", "generation 0", 0), nullptr);
  EXPECT_NE(find_event(trace, "X", "generation 1", 0), nullptr);

  // The failure on rank 3's lane is linked to the restart on the job's lane.
  const Json* failure = find_event(trace, "i", "failure", 2);
  const Json* restart = find_event(trace, "i", "restart \u2192 generation 1", 0);
  const Json* from = find_event(trace, "s", "caused", 2);
  const Json* to = find_event(trace, "f", "caused", 0);
  ASSERT_TRUE(failure && restart && from && to) << trace.dump(1);
  EXPECT_EQ((*from)["id"], (*to)["id"]);
  EXPECT_EQ((*from)["tid"], 4);
  EXPECT_LE((*failure)["ts"].get<double>(), (*restart)["ts"].get<double>());

  std::map<int, std::string> processes;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
  EXPECT_EQ(processes[0], "job");
  EXPECT_EQ(processes[1].rfind("node 0 (", 0), 0u) << processes[1];
  EXPECT_EQ(processes[2].rfind("node 1 (", 0), 0u) << processes[2];

  // The same trace went to the log directory, and `ddplaunch timeline` makes both files from it.
  EXPECT_EQ(read_file(log_dir + "/timeline.json"), read_file(trace_path));
  EXPECT_TRUE(fs::exists(log_dir + "/timeline.html"));
  const std::string again = dir.path + "/again.json";
  dt::RunResult rewritten = dt::run_command({DDPLAUNCH_BIN, "timeline", "--log-dir", log_dir, "--trace", again}, 30s);
  EXPECT_EQ(rewritten.exit_code, 0) << rewritten.output;
  EXPECT_EQ(read_file(again), read_file(trace_path));
  EXPECT_EQ(read_file(dir.path + "/again.html"), read_file(dir.path + "/job.html"));

  // The page, opened by headless Chromium from its file:// URL, draws 2 nodes, 4 rank lanes,
  // both generations, the restart and its cause; the screenshot is not blank.
  const std::string page = dir.path + "/job.html";
  dt::RunResult drawn = dt::run_command({PYTHON_WITH_TORCH, kPageChecker, page, "--nodes", "2", "--ranks", "4",
                                         "--min-generations", "2", "--expect-restart", "--expect-time-account",
                                         "--expect-root-cause", "rank 3",
                                         "--screenshot", dir.path + "/page.png"},
                                        180s);
  if (drawn.exit_code == 2 && drawn.output.find("no chromium on PATH") != std::string::npos)
    GTEST_SKIP() << "no Chromium to open the page (scripts/install-deps.sh installs it): " << drawn.output;
  EXPECT_EQ(drawn.exit_code, 0) << drawn.output;
}

// A rank's exception, then a restart: the timeline's root cause carries the exception text
// the terminal shows, the job's `ended` event names the generation it ended in, and the
// failure's link to the restart starts on the failed rank's slice, at its failure.
TEST(Timeline, AnExceptionsTextIsTheRootCauseAndTheEndAndTheFlowSitWhereTheyHappened) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  TempDir dir;
  const std::string trace_path = dir.path + "/job.json";
  dt::RunResult r = dt::run_command({DDPLAUNCH_BIN, "--nproc-per-node", "2", "--max-restarts", "1", "--history-file",
                                     "off", "--trace", trace_path, "--", PYTHON_WITH_TORCH, kScripts + "bad_batch.py"},
                                    180s, {{"FAIL_FIRST_ONLY", "1"}});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(fs::exists(trace_path)) << r.output;
  const Json trace = Json::parse(read_file(trace_path));
  EXPECT_NE(trace["otherData"]["root_cause"].get<std::string>().find("ValueError: bad batch at step 6"), std::string::npos)
      << trace["otherData"];
  const Json* ended = find_event(trace, "i", "ended", 0);
  ASSERT_NE(ended, nullptr) << trace.dump(1);
  EXPECT_EQ((*ended)["args"]["generation"], 1) << ended->dump();
  // Rank 1 (node 0: pid 1, tid 2) ran and failed in generation 0; the link starts inside that slice.
  const Json* from = find_event(trace, "s", "caused", 1);
  ASSERT_NE(from, nullptr) << trace.dump(1);
  EXPECT_EQ((*from)["tid"], 2) << from->dump();
  const Json* failed = nullptr;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 1 && e["tid"] == 2 && e["name"] == "running" && e["args"]["generation"] == 0) failed = &e;
  ASSERT_NE(failed, nullptr) << trace.dump(1);
  const double start = (*failed)["ts"].get<double>(), end = start + (*failed)["dur"].get<double>();
  EXPECT_GE((*from)["ts"].get<double>(), start) << from->dump() << "\n" << failed->dump();
  EXPECT_LE((*from)["ts"].get<double>(), end) << "the link starts after the failed slice:\n" << from->dump() << "\n"
                                              << failed->dump();
}

TEST(Timeline, ARunningJobsTimelineComesFromItsMasterWithItsSlicesStillOpen) {
  TempDir dir;
  const std::string job_id = "timeline-live-" + std::to_string(::getpid());
  dt::BackgroundProcess launcher;
  ASSERT_TRUE(launcher.start({DDPLAUNCH_BIN, "--standalone", "--nproc-per-node", "2", "--job-id", job_id, "--grace", "1",
                              "--", "/bin/sh", "-c", "sleep 60"}));
  ASSERT_TRUE(launcher.wait_for_output("starting 2 worker(s)", 60s)) << launcher.output_so_far();
  const std::string out = dir.path + "/live.json";
  Json trace;
  // The workers' first states reach the master within a report (20 ms) of their start; a
  // few tries at most.
  for (int attempt = 0; attempt < 20; ++attempt) {
    dt::RunResult taken = dt::run_command({DDPLAUNCH_BIN, "timeline", "--job", job_id, "--trace", out}, 30s);
    ASSERT_EQ(taken.exit_code, 0) << taken.output << launcher.output_so_far();
    EXPECT_NE(taken.output.find(dir.path + "/live.html"), std::string::npos) << taken.output;
    trace = Json::parse(read_file(out));
    if (lane_slices(trace, 1, 1)[0].count("setup") && lane_slices(trace, 1, 2)[0].count("setup")) break;
    std::this_thread::sleep_for(250ms);
  }
  EXPECT_TRUE(trace["otherData"]["exit_code"].is_null()) << trace.dump(1);  // still running
  const Json* generation = find_event(trace, "X", "generation 0", 0);
  ASSERT_NE(generation, nullptr) << trace.dump(1);
  EXPECT_EQ((*generation)["args"]["open"], true);
  for (int tid : {1, 2}) EXPECT_EQ(lane_slices(trace, 1, tid)[0].count("setup"), 1u) << trace.dump(1);
  EXPECT_TRUE(fs::exists(dir.path + "/live.html"));
  launcher.send_signal(SIGTERM);
  EXPECT_FALSE(launcher.wait(30s).timed_out);
}

TEST(Timeline, WithoutAJobOrItsLogDirectoryTheTimelineCommandSaysWhatItNeeds) {
  TempDir dir;
  dt::RunResult missing = dt::run_command({DDPLAUNCH_BIN, "timeline", "--log-dir", dir.path}, 30s);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find(dir.path + "/timeline.json"), std::string::npos) << missing.output;
  EXPECT_NE(missing.output.find("--log-dir"), std::string::npos) << missing.output;
}
