// Lemon hosts: a host the run history says caused trouble in 2 of the last 10 runs is named with
// its record as its launcher joins; with spares it is the spare kept in reserve, so the job
// runs on the other launchers; without spares it takes part and the line says so. Real
// launchers on 127.0.0.1, each with a host name of its own (a UTS namespace), and a history
// file seeded by the test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "multi_node_job.h"
#include "own_hostname.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono_literals;

namespace {

const auto kBound = 60s;

std::string temp_dir() {
  std::string pattern = "/tmp/ddpl-lemon-XXXXXX";
  return ::mkdtemp(pattern.data()) ? pattern : "";
}

// Three past runs of other jobs: host "lemon" failed a rank in two of them and straggled in
// one; host "flaky" failed once (not enough to be named).
std::string seeded_history(const std::string& dir) {
  const std::string path = dir + "/history";
  std::ofstream out(path);
  const long long now = static_cast<long long>(::time(nullptr));
  out << "v1 other-job " << now - 3000 << " 2.000 0.500 @lemon/1/0\n";
  out << "v1 other-job " << now - 2000 << " 2.000 0.500 @flaky/2/0 @lemon/0/1\n";
  out << "v1 another-job " << now - 1000 << " 2.000 0.500 @lemon/3/0\n";
  return path;
}

// Each worker says where it ran; the job lasts long enough for every launcher to join.
const std::vector<std::string> kProgram = {"/bin/sh", "-c", "echo \"WORKER rank=$RANK host=$(hostname)\"; sleep 1"};

}  // namespace

TEST(LemonHost, AHostTroubledInPastRunsIsNamedAtTheStartAndKeptAsTheSpare) {
  if (auto r = dt::own_hostname_skip_reason(); !r.empty()) GTEST_SKIP() << r;
  const std::string dir = temp_dir();
  ASSERT_FALSE(dir.empty());
  const std::string history = seeded_history(dir);
  const dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "lemon-spare", {"--spares", "1"});
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
  nodes.push_back(dt::start_node(
      dt::with_own_hostname("main", dt::node_argv(job, 0, 1, {"--history-file", history}, kProgram))));
  ASSERT_TRUE(dt::wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  // The lemon joins first as node 1; the launcher started as the spare (node rank 2) comes after.
  nodes.push_back(dt::start_node(dt::with_own_hostname("lemon", dt::node_argv(job, 1, 1, {}, kProgram))));
  ASSERT_TRUE(nodes[0]->wait_for_output("it is kept as a spare", kBound)) << nodes[0]->output_so_far();
  nodes.push_back(dt::start_node(dt::with_own_hostname("good", dt::node_argv(job, 2, 1, {}, kProgram))));
  const auto results = dt::wait_all(nodes, kBound);
  ASSERT_EQ(results.size(), 3u);
  const std::string all = "===== main\n" + results[0].output + "===== lemon\n" + results[1].output + "===== good\n" +
                          results[2].output;
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << all;
  EXPECT_NE(results[0].output.find("host lemon failed ranks in 2 and was a straggler in 1 of the last 3 runs"),
            std::string::npos)
      << all;
  EXPECT_EQ(results[0].output.find("host flaky"), std::string::npos) << all;  // troubled once: not named
  // The job ran on main and good; the lemon waited idle as the spare.
  EXPECT_NE(results[0].output.find("WORKER rank=0 host=main"), std::string::npos) << all;
  EXPECT_NE(results[2].output.find("WORKER rank=1 host=good"), std::string::npos) << all;
  EXPECT_EQ(results[1].output.find("WORKER "), std::string::npos) << all;
  EXPECT_NE(results[1].output.find("is a hot spare of this job"), std::string::npos) << all;
  std::filesystem::remove_all(dir);
}

TEST(LemonHost, WithoutSparesItIsNamedAndTakesPart) {
  if (auto r = dt::own_hostname_skip_reason(); !r.empty()) GTEST_SKIP() << r;
  const std::string dir = temp_dir();
  ASSERT_FALSE(dir.empty());
  const std::string history = seeded_history(dir);
  const dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "lemon-member");
  const auto results = dt::run_job_nodes(
      {dt::with_own_hostname("main", dt::node_argv(job, 0, 1, {"--history-file", history}, kProgram)),
       dt::with_own_hostname("lemon", dt::node_argv(job, 1, 1, {}, kProgram))},
      kBound);
  ASSERT_EQ(results.size(), 2u);
  const std::string all = "===== main\n" + results[0].output + "===== lemon\n" + results[1].output;
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << all;
  EXPECT_NE(results[0].output.find("host lemon failed ranks in 2 and was a straggler in 1 of the last 3 runs"),
            std::string::npos)
      << all;
  EXPECT_NE(results[0].output.find("it takes part as node 1 (with --spares, it would be kept in reserve as the spare)"),
            std::string::npos)
      << all;
  EXPECT_NE(results[1].output.find("WORKER rank=1 host=lemon"), std::string::npos) << all;
  std::filesystem::remove_all(dir);
}
