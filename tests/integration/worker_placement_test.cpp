// --numa-binding and --virtual-local-rank with the real binary: each worker's CPU affinity,
// read by the worker itself from /proc (Cpus_allowed_list), follows the plan --dry-run shows;
// the launcher's own allowed CPUs (taskset) bound it; --virtual-local-rank narrows
// LOCAL_RANK and CUDA_VISIBLE_DEVICES as torchrun does.
#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "output_parsing.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using std::chrono::seconds;

namespace {

constexpr auto kRunLimit = seconds(120);
const std::string kPrintAffinity = "grep Cpus_allowed_list /proc/self/status";

std::set<int> allowed_cpus_here() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::set<int> out;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) out.insert(c);
  return out;
}

std::set<int> parse_list(const std::string& text) {
  std::set<int> out;
  std::regex item(R"((\d+)(?:-(\d+))?)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), item); it != std::sregex_iterator(); ++it) {
    int first = std::stoi((*it)[1]), last = (*it)[2].matched ? std::stoi((*it)[2]) : first;
    for (int c = first; c <= last; ++c) out.insert(c);
  }
  return out;
}

// Physical cores among `cpus` (hyperthread siblings count once), from sysfs.
std::size_t physical_cores(const std::set<int>& cpus) {
  std::set<int> cores;
  for (int cpu : cpus) {
    std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list");
    std::string text;
    std::getline(in, text);
    auto siblings = parse_list(text);
    cores.insert(siblings.empty() ? cpu : *siblings.begin());
  }
  return cores.size();
}

// "[rank R] Cpus_allowed_list:\tLIST" → cpus[R]
std::map<int, std::set<int>> worker_affinities(const std::string& output) {
  std::map<int, std::set<int>> out;
  std::regex line(R"(\[rank (\d+)\] Cpus_allowed_list:\s*([0-9,\-]+))");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line); it != std::sregex_iterator(); ++it)
    out[std::stoi((*it)[1])] = parse_list((*it)[2]);
  return out;
}

dt::RunResult run_launcher(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
  args.insert(args.begin(), DDPLAUNCH_BIN);
  return dt::run_command(args, kRunLimit, env);
}

}  // namespace

TEST(WorkerPlacement, EachWorkerRunsOnItsOwnSliceOfTheLaunchersCpus) {
  const std::set<int> allowed = allowed_cpus_here();
  if (physical_cores(allowed) < 2) GTEST_SKIP() << "needs 2 allowed physical cores; this process has CPUs " << allowed.size();
  dt::RunResult r = run_launcher({"--nproc-per-node", "2", "--numa-binding", "node", "--", "/bin/sh", "-c",
                                  kPrintAffinity});
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto cpus = worker_affinities(r.output);
  ASSERT_EQ(cpus.size(), 2u) << r.output;
  for (const auto& [rank, set] : cpus) {
    EXPECT_FALSE(set.empty()) << "rank " << rank << "\n" << r.output;
    for (int c : set) EXPECT_TRUE(allowed.count(c)) << "rank " << rank << " got CPU " << c << "\n" << r.output;
  }
  for (int c : cpus[0]) EXPECT_EQ(cpus[1].count(c), 0u) << "ranks 0 and 1 share CPU " << c << "\n" << r.output;

  // Without --numa-binding a worker inherits every allowed CPU.
  dt::RunResult plain = run_launcher({"--nproc-per-node", "1", "--", "/bin/sh", "-c", kPrintAffinity});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(worker_affinities(plain.output)[0], allowed) << plain.output;
}

TEST(WorkerPlacement, TheLaunchersAllowedCpusBoundThePlacement) {
  const std::set<int> allowed = allowed_cpus_here();
  if (allowed.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs, this process has " << allowed.size();
  const int last = *allowed.rbegin();
  dt::RunResult r = dt::run_command({"taskset", "-c", std::to_string(last), DDPLAUNCH_BIN, "--nproc-per-node", "2",
                                     "--numa-binding", "exclusive", "--", "/bin/sh", "-c", kPrintAffinity},
                                    kRunLimit);
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto cpus = worker_affinities(r.output);
  ASSERT_EQ(cpus.size(), 2u) << r.output;
  EXPECT_EQ(cpus[0], std::set<int>{last}) << r.output;  // one core for two workers: shared in turn
  EXPECT_EQ(cpus[1], std::set<int>{last}) << r.output;
}

TEST(WorkerPlacement, DryRunShowsEachWorkersCpus) {
  const std::set<int> allowed = allowed_cpus_here();
  if (allowed.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs, this process has " << allowed.size();
  dt::RunResult r = run_launcher({"--dry-run", "--nproc-per-node", "2", "--numa-binding", "socket", "--", "/bin/false"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("numa_binding: socket"), std::string::npos) << r.output;
  std::regex line(R"(# placement: cpus ([0-9,\-]+), .*no GPU: slice (\d) of 2)");
  int shown = 0;
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), line); it != std::sregex_iterator(); ++it)
    ++shown;
  EXPECT_EQ(shown, 2) << r.output;
}

TEST(WorkerPlacement, BadModeIsRefusedWithTheChoices) {
  dt::RunResult r = run_launcher({"--numa-binding", "numa", "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'numa' is not node, socket, exclusive or core-complex"), std::string::npos) << r.output;
}

TEST(WorkerPlacement, VirtualLocalRankGivesEachWorkerDeviceZeroOfItsOwnGpu) {
  dt::RunResult r = run_launcher({"--nproc-per-node", "3", "--virtual-local-rank", "--", "/bin/sh", "-c",
                                  "echo ENV LOCAL_RANK=$LOCAL_RANK; echo ENV RANK=$RANK; "
                                  "echo ENV CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"},
                                 {{"CUDA_VISIBLE_DEVICES", "5,6,7"}});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<int, std::map<std::string, std::string>> env;
  for (const auto& l : dt::env_lines(r.output))
    if (l.value) env[l.rank][l.name] = *l.value;
  ASSERT_EQ(env.size(), 3u) << r.output;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(env[rank]["LOCAL_RANK"], "0") << r.output;
    EXPECT_EQ(env[rank]["RANK"], std::to_string(rank)) << r.output;
    EXPECT_EQ(env[rank]["CUDA_VISIBLE_DEVICES"], std::to_string(5 + rank)) << r.output;
  }
  dt::RunResult short_list = run_launcher({"--nproc-per-node", "3", "--virtual-local-rank", "--", "/bin/true"},
                                          {{"CUDA_VISIBLE_DEVICES", "0,1"}});
  EXPECT_EQ(short_list.exit_code, 2) << short_list.output;
  EXPECT_NE(short_list.output.find("3 workers need 3 entries"), std::string::npos) << short_list.output;
}
