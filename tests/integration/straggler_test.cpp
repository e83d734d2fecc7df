// Stragglers and the job's time account with real launchers and real gloo DDP workers: a
// CPU-starved node on a cluster of network namespaces is named with its node and host and what
// explains it (its rank's CPU share), in the master's log while the job runs and in its end
// summary, and counts against its host in the run history; a balanced job names nobody; the --report file's times are the timeline's.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpu_quota.h"
#include "launcher_test_env.h"
#include "multi_node_job.h"
#include "netns_cluster.h"
#include "own_hostname.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono;
using Json = nlohmann::json;

namespace {

const std::string kScript = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/paced_ddp.py";

bool torch_available() { return dt::torch_available(PYTHON_WITH_TORCH); }

std::string temp_dir(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + "XXXXXX";
  return ::mkdtemp(pattern.data()) ? pattern : "";
}

Json read_json(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in, nullptr, false);
}

// From the trace: the job's first event and generation 0's last "first step" instant (every
// rank training), in seconds apart: what the report's time_to_start_s must say.
double time_to_start_in_trace(const Json& trace) {
  double first = -1, last_first_step = -1;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" || !e.contains("ts")) continue;
    const double ts = e["ts"].get<double>();
    if (first < 0 || ts < first) first = ts;
    if (e["ph"] == "i" && e["name"] == "first step" && e["args"]["generation"] == 0)
      last_first_step = std::max(last_first_step, ts);
  }
  return first < 0 || last_first_step < 0 ? -1 : (last_first_step - first) / 1e6;
}

// Both the report and the timeline of one job: the report's figures are read from the same
// events, so its time to start is the trace's to within rounding.
void expect_report_matches_trace(const std::string& report_path, const std::string& trace_path) {
  const Json report = read_json(report_path);
  const Json trace = read_json(trace_path);
  ASSERT_TRUE(report.is_object()) << report_path;
  ASSERT_TRUE(trace.is_object()) << trace_path;
  ASSERT_FALSE(report["time_to_start_s"].is_null()) << report.dump();
  const double from_trace = time_to_start_in_trace(trace);
  ASSERT_GT(from_trace, 0) << "no first steps in the trace";
  EXPECT_NEAR(report["time_to_start_s"].get<double>(), from_trace, 0.01) << report.dump();
  EXPECT_GT(report["wall_s"].get<double>(), report["training_s"].get<double>());
  EXPECT_GT(report["effective_training_share"].get<double>(), 0.2) << report.dump();
  EXPECT_EQ(report["exit_code"], 0);
}

}  // namespace

// Two hosts, one rank each. Once every rank finished init, host 2's launcher and its worker get
// 5 % of one CPU (a cgroup CPU quota): rank 1 computes many times as long per step, rank 0
// waits for it. (From init on: the worker's start at 5 % of a core took ~40 s, and is no step.)
TEST(Straggler, ACpuStarvedNodeIsNamedWithItsNodeAndHostAndCountsAgainstItsHost) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  if (auto r = dt::CpuQuota::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  if (auto r = dt::own_hostname_skip_reason(); !r.empty()) GTEST_SKIP() << r;
  if (!torch_available()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch.distributed";
  const std::string dir = temp_dir("ddpl-straggler-");
  ASSERT_FALSE(dir.empty());
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("str"), 2);
  const dt::CpuQuota quota;
  const dt::MultiNodeJob job{.launcher = DDPLAUNCH_BIN, .nodes = 2, .master_host = cluster.address(1), .port = 29400,
                             .flags = {"--grace", "1", "--join-timeout", "60"}};
  const std::vector<std::string> program = {PYTHON_WITH_TORCH, kScript};
  const std::map<std::string, std::string> env = {{"DDPL_TRAIN_S", "100"}, {"DDPL_STOP_FILE", dir + "/stop"},
                                                  {"DDPLAUNCH_HISTORY", dir + "/history"}};
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
  for (int host = 1; host <= 2; ++host) {
    std::vector<std::string> flags;
    if (host == 1) flags = {"--trace", dir + "/trace.json", "--report", dir + "/report.json"};
    nodes.push_back(std::make_unique<dt::BackgroundProcess>());
    // Each host has a name of its own, as real hosts do (the run history blames one by it).
    const auto argv = cluster.exec_argv(host, dt::node_argv(job, host - 1, 1, flags, program));
    ASSERT_TRUE(nodes.back()->start(dt::with_own_hostname("str-h" + std::to_string(host), argv), env,
                                    dt::kLauncherEnvToUnset));
  }
  // unshare and `ip netns exec` exec the launcher in place: the pid started is the launcher's,
  // and its worker is a descendant of it.
  ASSERT_TRUE(nodes[0]->wait_for_output("ranks finished init (init_ok)", seconds(120)))
      << nodes[0]->output_so_far() << nodes[1]->output_so_far();
  ASSERT_TRUE(quota.add_with_descendants(nodes[1]->pid()));
  // Named by the master (node 0) while the job runs: the rank, its node and its host.
  const bool named = nodes[0]->wait_for_output("straggler: rank 1 (node 1, host ", seconds(120));
  { std::ofstream(dir + "/stop") << "stop\n"; }
  std::vector<dt::RunResult> results;
  for (auto& n : nodes) results.push_back(n->wait(seconds(90)));
  const std::string master = results[0].output;
  ASSERT_TRUE(named) << master << results[1].output;
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << r.output;
  // The line says why and what to look at; rank 0 is never named.
  std::smatch line;
  ASSERT_TRUE(std::regex_search(master, line, std::regex(R"(straggler: rank 1 \(node 1, host (\S+)\) computes ([0-9.]+)x the median of the other ranks; the other 1 rank\(s\) wait ([0-9]+) % of each step for it)")))
      << master;
  EXPECT_GE(std::stod(line[2].str()), 1.3);
  EXPECT_GE(std::stoi(line[3].str()), 15);
  const std::string host = line[1].str();
  EXPECT_EQ(host, "str-h2");
  EXPECT_EQ(master.find("straggler: rank 0 "), std::string::npos) << master;
  // What explains it, from the starved node's own readings: its rank got a sliver of a core.
  // (Its cgroup's throttling is not readable there: `ip netns exec` remounts /sys, so the
  // launcher sees no cgroup file system; the unit tests read throttling from fixed texts.)
  std::smatch why;
  ASSERT_TRUE(std::regex_search(master, why, std::regex(R"(of each step for it — node 1: rank 1 got ([0-9.]+) of a core)")))
      << master;
  EXPECT_LT(std::stod(why[1].str()), 0.5);
  // The end summary names it again, with how long; the time account is one line.
  EXPECT_NE(master.find("straggler: rank 1 (node 1, host " + host + ") held the job back for"), std::string::npos)
      << master;
  EXPECT_TRUE(std::regex_search(master, std::regex(R"(held the job back for .* of each step — node 1: rank 1 got [0-9.]+ of a core)")))
      << master;
  EXPECT_NE(master.find("effective training time "), std::string::npos) << master;
  // The report carries the episode; its times are the timeline's.
  const Json report = read_json(dir + "/report.json");
  ASSERT_TRUE(report.is_object());
  ASSERT_GE(report["stragglers"].size(), 1u) << report.dump();
  expect_report_matches_trace(dir + "/report.json", dir + "/trace.json");
  // The run history now counts a slowdown against that host.
  std::ifstream history(dir + "/history");
  const std::string recorded((std::istreambuf_iterator<char>(history)), std::istreambuf_iterator<char>());
  EXPECT_NE(recorded.find(" @" + host + "/0/"), std::string::npos) << recorded;
  std::filesystem::remove_all(dir);
}

// Four ranks of one launcher doing the same work: nobody is named. The report and the trace
// of the same job agree.
TEST(Straggler, ABalancedJobNamesNobodyAndItsReportIsItsTimelines) {
  if (!torch_available()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch.distributed";
  const std::string dir = temp_dir("ddpl-balanced-");
  ASSERT_FALSE(dir.empty());
  dt::BackgroundProcess launcher;
  ASSERT_TRUE(launcher.start({DDPLAUNCH_BIN, "--nproc-per-node", "4", "--trace", dir + "/trace.json", "--report",
                              dir + "/report.json", "--", PYTHON_WITH_TORCH, kScript},
                             {{"DDPL_TRAIN_S", "25"}, {"DDPLAUNCH_HISTORY", dir + "/history"}}, dt::kLauncherEnvToUnset));
  const dt::RunResult result = launcher.wait(seconds(180));
  ASSERT_FALSE(result.timed_out) << result.output;
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.find("straggler:"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("effective training time "), std::string::npos) << result.output;
  const Json report = read_json(dir + "/report.json");
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report["stragglers"].empty()) << report.dump();
  expect_report_matches_trace(dir + "/report.json", dir + "/trace.json");
  std::filesystem::remove_all(dir);
}
