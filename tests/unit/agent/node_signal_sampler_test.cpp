// NodeSignalSampler over fixed kernel texts: the figures are the counters' change over the
// window between two readings (steal, each worker's cores, its cgroup's throttled periods);
// pressure is read as it stands; a report within the minimum window reads nothing; a file that
// is missing or malformed leaves its figure out.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>

#include "agent/node_signal_sampler.h"
#include "../../integration/support/cpu_quota.h"

namespace ddplaunch {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Files by path; every read counted.
class FixedFiles final : public SystemFiles {
 public:
  std::map<std::string, std::string> text;
  mutable int reads = 0;
  std::string read(const std::string& path, std::size_t limit) const override {
    ++reads;
    auto found = text.find(path);
    return found == text.end() ? "" : found->second.substr(0, limit);
  }
};

std::string pid_stat(unsigned long long utime, unsigned long long stime) {
  return "77 (python3) R 1 77 1 0 -1 4194304 99 0 0 0 " + std::to_string(utime) + " " + std::to_string(stime) +
         " 0 0 20 0 3 0 24361 3133440 376\n";
}
std::string cpu_line(unsigned long long busy, unsigned long long steal) {
  return "cpu  " + std::to_string(busy) + " 0 0 0 0 0 0 " + std::to_string(steal) + " 0 0\n";
}

struct Node {
  FixedFiles files;
  NodeSignalSampler sampler{files, 100};
  NodeSignalSampler::Clock::time_point now{};

  Node() {
    files.text["/proc/self/mountinfo"] = "31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
    files.text["/proc/77/cgroup"] = "1:cpu:/quota\n0::/\n";
    files.text["/proc/pressure/cpu"] = "some avg10=81.00 avg60=50.00 avg300=20.00 total=1\n";
    files.text["/proc/pressure/memory"] = "some avg10=0.50 avg60=0.00 avg300=0.00 total=1\n";
    at(0, 0, 1000, 0, 0);
  }
  // The counters as they stand: the worker's ticks, the node's busy and stolen ticks, the
  // cgroup's periods and throttled periods.
  void at(unsigned long long ticks, unsigned long long steal, unsigned long long busy, unsigned long long periods,
          unsigned long long throttled) {
    files.text["/proc/77/stat"] = pid_stat(ticks, 0);
    files.text["/proc/stat"] = cpu_line(busy, steal);
    files.text["/sys/fs/cgroup/cpu/quota/cpu.stat"] =
        "nr_periods " + std::to_string(periods) + "\nnr_throttled " + std::to_string(throttled) + "\nthrottled_time 5\n";
  }
};

TEST(NodeSignalSampler, TheFirstReadingGivesOnlyPressureTheSecondTheWindowsFigures) {
  Node node;
  const NodeSample& first = node.sampler.sample({77}, node.now);
  EXPECT_FALSE(first.signals.steal);
  EXPECT_FALSE(first.signals.throttled);
  EXPECT_TRUE(first.cpu_cores.empty());
  EXPECT_DOUBLE_EQ(*first.signals.cpu_pressure, 0.81);
  EXPECT_DOUBLE_EQ(*first.signals.memory_pressure, 0.005);
  EXPECT_FALSE(first.signals.io_pressure);  // no /proc/pressure/io here: nothing said

  // 2 s later: the worker used 10 ticks (0.1 s of CPU: 0.05 of a core), 92 of 100 periods
  // were throttled, 50 of 1000 ticks of the node's CPU time were stolen.
  node.now += seconds(2);
  node.at(10, 50, 1950, 100, 92);
  const NodeSample& second = node.sampler.sample({77}, node.now);
  EXPECT_NEAR(second.cpu_cores.at(77), 0.05, 1e-9);
  EXPECT_NEAR(*second.signals.throttled, 0.92, 1e-9);
  EXPECT_EQ(second.signals.throttled_cgroup, "/quota");
  EXPECT_NEAR(*second.signals.steal, 0.05, 1e-9);
}

TEST(NodeSignalSampler, AReportWithinTheMinimumWindowRepeatsTheFiguresWithoutReading) {
  Node node;
  node.sampler.sample({77}, node.now);
  node.now += seconds(2);
  node.at(100, 0, 2000, 20, 0);
  const double cores = node.sampler.sample({77}, node.now).cpu_cores.at(77);
  const int reads = node.files.reads;
  node.now += milliseconds(20);
  node.at(300, 0, 3000, 40, 40);
  const NodeSample& again = node.sampler.sample({77}, node.now);
  EXPECT_EQ(node.files.reads, reads);
  EXPECT_DOUBLE_EQ(again.cpu_cores.at(77), cores);
  EXPECT_DOUBLE_EQ(*again.signals.throttled, 0.0);
}

TEST(NodeSignalSampler, MissingOrMalformedFilesLeaveTheirFiguresOut) {
  Node node;
  node.sampler.sample({77, 78}, node.now);  // 78: no such process
  node.now += seconds(2);
  node.files.text["/proc/stat"] = "cpu  garbage\n";
  node.files.text["/proc/77/stat"] = "77 (python3";
  node.files.text["/sys/fs/cgroup/cpu/quota/cpu.stat"] = "nr_periods 5\n";
  node.files.text.erase("/proc/pressure/cpu");
  const NodeSample& sample = node.sampler.sample({77, 78}, node.now);
  EXPECT_FALSE(sample.signals.steal);
  EXPECT_FALSE(sample.signals.throttled);
  EXPECT_FALSE(sample.signals.cpu_pressure);
  EXPECT_TRUE(sample.cpu_cores.empty());
}

// A cgroup without a quota counts no periods; a worker that is new in the window has no share yet.
TEST(NodeSignalSampler, NoQuotaNoThrottlingAndANewWorkerWaitsForItsSecondReading) {
  Node node;
  node.sampler.sample({77}, node.now);
  node.now += seconds(2);
  node.files.text["/proc/78/stat"] = pid_stat(50, 50);
  node.files.text["/proc/78/cgroup"] = "1:cpu:/\n";
  node.files.text["/sys/fs/cgroup/cpu/cpu.stat"] = "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n";
  node.at(200, 0, 2000, 0, 0);
  const NodeSample& sample = node.sampler.sample({77, 78}, node.now);
  EXPECT_FALSE(sample.signals.throttled);
  EXPECT_NEAR(sample.cpu_cores.at(77), 1.0, 1e-9);
  EXPECT_FALSE(sample.cpu_cores.count(78));
}

// The launcher's own process, read from the real /proc: a busy loop shows as most of a core.
TEST(NodeSignalSampler, TheRealProcShowsABusyProcessesCpuShare) {
  NodeSignalSampler sampler(kernel_files(), ::sysconf(_SC_CLK_TCK));
  const pid_t self = ::getpid();
  auto start = NodeSignalSampler::Clock::now();
  sampler.sample({self}, start);
  volatile unsigned long spin = 0;
  while (NodeSignalSampler::Clock::now() - start < milliseconds(1200)) spin = spin + 1;
  const NodeSample& sample = sampler.sample({self}, NodeSignalSampler::Clock::now());
  ASSERT_TRUE(sample.cpu_cores.count(self));
  EXPECT_GT(sample.cpu_cores.at(self), 0.0);
  EXPECT_LE(sample.cpu_cores.at(self), 1.5);
  EXPECT_TRUE(sample.signals.steal);  // every Linux /proc/stat has the steal column
}

// The real kernel's throttling: a busy child in a cgroup (v1 cpu controller) with a quota of 5 %
// of one CPU (the straggler tests' CpuQuota, made and removed here) is found through its
// /proc/PID/cgroup and the mounts, and its cgroup was throttled in most periods while the
// child got a sliver of a core.
class BusyChild {
 public:
  BusyChild() : pid_(::fork()) {
    if (pid_ == 0)
      for (volatile unsigned long spin = 0;; spin = spin + 1) {}
  }
  ~BusyChild() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};

TEST(NodeSignalSampler, TheRealKernelsThrottlingOfAWorkersCgroupIsRead) {
  if (auto r = testing::CpuQuota::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  const testing::CpuQuota quota;  // removed after the child is gone: declared first
  const BusyChild child;
  ASSERT_GT(child.pid(), 0);
  ASSERT_TRUE(quota.add(child.pid()));
  NodeSignalSampler sampler(kernel_files(), ::sysconf(_SC_CLK_TCK));
  const auto start = NodeSignalSampler::Clock::now();
  sampler.sample({child.pid()}, start);
  ::usleep(1500 * 1000);
  const NodeSample& sample = sampler.sample({child.pid()}, NodeSignalSampler::Clock::now());
  ASSERT_TRUE(sample.signals.throttled);
  EXPECT_EQ(sample.signals.throttled_cgroup.rfind("/ddpl-quota-", 0), 0u) << sample.signals.throttled_cgroup;
  EXPECT_GT(*sample.signals.throttled, 0.5);
  ASSERT_TRUE(sample.cpu_cores.count(child.pid()));
  EXPECT_LT(sample.cpu_cores.at(child.pid()), 0.5);
}

}  // namespace
}  // namespace ddplaunch
