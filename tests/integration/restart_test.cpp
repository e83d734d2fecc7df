// Whole-group restart across real ddplaunch nodes on 127.0.0.1: an init failure on one node
// restarts every node once; a rank hung in init is caught at the init deadline; a program that
// never initialises uses up the restarts and gets a root-cause report; runtime failures do not restart.
#include <chrono>
#include <map>
#include <regex>
#include <tuple>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "multi_node_job.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::testing::all_output;
using ddplaunch::testing::count_of;
using ddplaunch::testing::MultiNodeJob;
using ddplaunch::testing::RunResult;

constexpr auto kJobBound = 90s;  // "finished, not hung", with restarts, on a busy 2-core machine
constexpr int kNproc = 2;        // workers on each of the 2 nodes

MultiNodeJob new_job(const std::string& job_id, const std::vector<std::string>& flags) {
  return ddplaunch::testing::new_loopback_job(DDPLAUNCH_BIN, 2, job_id, flags);
}

std::vector<std::string> fake_worker(std::vector<std::string> args) {
  args.insert(args.begin(), FAKE_WORKER_BIN);
  return args;
}

// Starts node 0 (waiting until it listens), then the others; waits for all, bounded.
std::vector<RunResult> run_job(const MultiNodeJob& job, const std::vector<std::vector<std::string>>& program_by_node) {
  std::vector<std::vector<std::string>> argv_by_node;
  for (int r = 0; r < job.nodes; ++r)
    argv_by_node.push_back(ddplaunch::testing::node_argv(job, r, kNproc, {}, program_by_node[r]));
  return ddplaunch::testing::run_job_nodes(argv_by_node, kJobBound);
}

// Values of ENV NAME printed by each rank, in the order printed: env_values(out, "DDPLAUNCH_GENERATION")[rank].
std::map<int, std::vector<std::string>> env_values(const std::string& output, const std::string& name) {
  std::map<int, std::vector<std::string>> values;
  for (const auto& line : ddplaunch::testing::env_lines(output))
    if (line.node >= 0 && line.name == name && line.value) values[line.rank].push_back(*line.value);
  return values;
}

TEST(Restart, InitFailureOnNode1RestartsTheWholeGroupOnce) {
  MultiNodeJob job = new_job("it2-fail-once", {"--max-restarts", "3"});
  // Node 1 holds ranks 2 and 3; rank 3 fails init in generation 0 only, and starts 2 s late in
  // generation 0 so that every other rank has printed (even on a loaded machine) and is still
  // running when the restart comes.
  std::vector<std::string> late_start = {
      "/bin/sh", "-c",
      "if [ \"$DDPLAUNCH_GENERATION\" = 0 ] && [ \"$RANK\" = 3 ]; then sleep 2; fi; exec \"$0\" \"$@\""};
  auto node1 = fake_worker(
      {"--print-env", "--report-init", "--fail-init-on-gen", "0", "--fail-rank", "3", "--sleep-ms", "4000"});
  late_start.insert(late_start.end(), node1.begin(), node1.end());
  auto results = run_job(job, {fake_worker({"--print-env", "--report-init", "--sleep-ms", "4000"}), late_start});
  ASSERT_EQ(results.size(), 2u);
  const std::string everything = all_output(results);
  EXPECT_EQ(results[0].exit_code, 0) << everything;
  EXPECT_EQ(results[1].exit_code, 0) << everything;
  // Workers started for generation 0 and 1 on both nodes: 2 × nproc each.
  EXPECT_EQ(count_of(results[0].output, "] FAKE_WORKER_PID="), 2 * kNproc) << everything;
  EXPECT_EQ(count_of(results[1].output, "] FAKE_WORKER_PID="), 2 * kNproc) << everything;
  EXPECT_EQ(count_of(results[0].output, "restart 1 of"), 1) << everything;
  EXPECT_EQ(count_of(everything, "restart 2 of"), 0) << everything;
  EXPECT_NE(results[0].output.find("fake init failure on generation 0"), std::string::npos) << everything;
  // Each rank printed its env twice: generation 0, then 1 with the restart count.
  for (const auto& [name, first, second] :
       {std::tuple{"DDPLAUNCH_GENERATION", "0", "1"}, std::tuple{"TORCHELASTIC_RESTART_COUNT", "0", "1"}}) {
    auto values = env_values(everything, name);
    ASSERT_EQ(values.size(), 4u) << name << "\n" << everything;
    for (const auto& [rank, seen] : values) {
      ASSERT_EQ(seen.size(), 2u) << name << " of rank " << rank;
      EXPECT_EQ(seen[0], first) << name << " of rank " << rank;
      EXPECT_EQ(seen[1], second) << name << " of rank " << rank;
    }
  }
}

TEST(Restart, RankHungInInitIsCaughtAtTheInitDeadline) {
  MultiNodeJob job = new_job("it2-hang-init", {"--max-restarts", "2", "--set", "timeout.base_s=2", "--set", "timeout.min_s=2",
                                      "--set", "timeout.per_node_s=0", "--set", "timeout.rtt_factor=0"});
  const auto program = fake_worker({"--report-init", "--hang-init-on-gen", "0", "--fail-rank", "0"});
  auto results = run_job(job, {program, program});
  ASSERT_EQ(results.size(), 2u);
  const std::string everything = all_output(results);
  EXPECT_EQ(results[0].exit_code, 0) << everything;
  EXPECT_EQ(results[1].exit_code, 0) << everything;
  EXPECT_NE(results[0].output.find("hanging in init on generation 0"), std::string::npos) << everything;
  EXPECT_TRUE(results[0].output.find("init deadline") != std::string::npos ||
              results[0].output.find("hung in init") != std::string::npos)
      << everything;
  EXPECT_EQ(count_of(results[0].output, "restart 1 of"), 1) << everything;
  EXPECT_EQ(count_of(everything, "restart 2 of"), 0) << everything;
  EXPECT_EQ(count_of(results[1].output, "] FAKE_WORKER_PID="), 2 * kNproc) << everything;
}

TEST(Restart, ProgramThatNeverInitialisesUsesUpTheRestartsWithARootCause) {
  // The program prints a line and exits 3 before initialising, every generation: output
  // proves nothing and no shim reported init, so each exit is the program's own failure in
  // setup (DESIGN.md "Phases"), restarted only by --max-restarts, never by the automatic init
  // budget (still 3 here, unused).
  MultiNodeJob job = new_job("it2-always-fail", {"--max-restarts", "2", "--shim", "none"});
  const std::vector<std::string> healthy = {"/bin/sh", "-c", "echo healthy rank $RANK; sleep 30"};
  const std::vector<std::string> failing = {
      "/bin/sh", "-c",
      "if [ \"$RANK\" = 2 ]; then echo \"cannot init rank $RANK generation $DDPLAUNCH_GENERATION\"; exit 3; fi; "
      "echo healthy rank $RANK; sleep 30"};
  auto results = run_job(job, {healthy, failing});
  ASSERT_EQ(results.size(), 2u);
  const std::string everything = all_output(results);
  EXPECT_NE(results[0].exit_code, 0) << everything;
  EXPECT_NE(results[1].exit_code, 0) << everything;
  EXPECT_EQ(results[0].exit_code, 3) << everything;
  EXPECT_EQ(count_of(results[0].output, "restart 1 of 2"), 1) << everything;
  EXPECT_EQ(count_of(results[0].output, "restart 2 of 2"), 1) << everything;
  EXPECT_EQ(count_of(everything, "restart 3 of"), 0) << everything;

  std::smatch m;
  ASSERT_TRUE(std::regex_search(results[0].output, m, std::regex(R"(JOB FAILED — root cause: ([^\n]*)\n)")))
      << everything;
  const std::string headline = m[1];
  EXPECT_NE(headline.find("rank 2 (local rank 0) on node 1"), std::string::npos) << headline;
  EXPECT_NE(headline.find("during setup"), std::string::npos) << headline;
  EXPECT_NE(headline.find("generation 2"), std::string::npos) << headline;
  const std::string report = results[0].output.substr(static_cast<std::size_t>(m.position(0)));
  EXPECT_NE(report.find("automatic init restarts 0 of 3, --max-restarts 2 of 2"), std::string::npos) << report;
  EXPECT_EQ(report.find("NCCL_SOCKET_IFNAME"), std::string::npos) << "network advice for a program error\n" << report;
  EXPECT_NE(report.find("likely cause:"), std::string::npos) << report;
  EXPECT_NE(report.find("output lines of rank 2:"), std::string::npos) << report;
  EXPECT_NE(report.find("    | cannot init rank 2 generation 2"), std::string::npos) << report;
}

TEST(Restart, RuntimeFailureStopsTheJobWithoutRestart) {
  MultiNodeJob job = new_job("it2-runtime", {});
  auto results = run_job(job, {fake_worker({"--report-init", "--sleep-ms", "200"}),
                               fake_worker({"--report-init", "--sleep-ms", "200", "--exit", "4"})});
  ASSERT_EQ(results.size(), 2u);
  const std::string everything = all_output(results);
  EXPECT_EQ(results[0].exit_code, 4) << everything;
  EXPECT_EQ(results[1].exit_code, 4) << everything;
  EXPECT_EQ(everything.find("restarting the whole group"), std::string::npos) << everything;
  EXPECT_EQ(everything.find("restart 1 of"), std::string::npos) << everything;
  EXPECT_EQ(count_of(everything, "] FAKE_WORKER_PID="), job.nodes * kNproc) << everything;
  EXPECT_NE(results[0].output.find("restarts used: 0 of"), std::string::npos) << everything;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(results[0].output, m, std::regex(R"(JOB FAILED — root cause: ([^\n]*)\n)")))
      << everything;
  EXPECT_NE(m[1].str().find("during runtime"), std::string::npos) << m[1];
  EXPECT_NE(m[1].str().find("on node 1"), std::string::npos) << m[1];
}

}  // namespace
