// NodeSignalSampler: see node_signal_sampler.h.
#include "agent/node_signal_sampler.h"

#include <algorithm>
#include <set>

#include "supervise/proc_file.h"

namespace ddplaunch {

namespace {

// How much of each file is read: each holds what is needed well inside its bound.
constexpr std::size_t kProcStatBytes = 4096;       // the aggregate "cpu" line comes first
constexpr std::size_t kPressureBytes = 512;
constexpr std::size_t kPidFileBytes = 4096;        // /proc/PID/stat, /proc/PID/cgroup
constexpr std::size_t kCpuStatBytes = 4096;
constexpr std::size_t kMountinfoBytes = 256 << 10;  // a container host's mount table can be long

class KernelFiles final : public SystemFiles {
 public:
  std::string read(const std::string& path, std::size_t limit) const override { return read_proc_file(path, limit); }
};

double seconds_between(NodeSignalSampler::Clock::time_point a, NodeSignalSampler::Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

const SystemFiles& kernel_files() {
  static const KernelFiles files;
  return files;
}

NodeSignalSampler::NodeSignalSampler(const SystemFiles& files, long ticks_per_s)
    : files_(files), ticks_per_s_(static_cast<double>(ticks_per_s > 0 ? ticks_per_s : 100)) {}

const std::vector<CgroupMount>& NodeSignalSampler::mounts() {
  if (!mounts_) mounts_ = parse_cgroup_mounts(files_.read("/proc/self/mountinfo", kMountinfoBytes));
  return *mounts_;
}

std::optional<double> NodeSignalSampler::pressure(const char* resource) const {
  return parse_pressure_some_avg10(files_.read(std::string("/proc/pressure/") + resource, kPressureBytes));
}

NodeSignalSampler::Reading NodeSignalSampler::read(const std::vector<pid_t>& pids, Clock::time_point now) {
  Reading reading;
  reading.at = now;
  reading.cpu = parse_cpu_times(files_.read("/proc/stat", kProcStatBytes));
  std::set<std::string> directories_read;
  for (pid_t pid : pids) {
    if (pid <= 0) continue;
    const std::string dir = "/proc/" + std::to_string(pid);
    if (auto ticks = parse_process_cpu_ticks(files_.read(dir + "/stat", kPidFileBytes))) reading.ticks[pid] = *ticks;
    if (reading.throttling.size() >= kMaxCgroups) continue;
    auto cgroup = cpu_cgroup_of(files_.read(dir + "/cgroup", kPidFileBytes), mounts());
    if (!cgroup || !directories_read.insert(cgroup->directory).second) continue;
    if (auto counts = parse_cpu_stat(files_.read(cgroup->directory + "/cpu.stat", kCpuStatBytes)))
      reading.throttling[cgroup->name] = *counts;
  }
  return reading;
}

NodeSample NodeSignalSampler::figures_between(const Reading& before, const Reading& after) const {
  NodeSample sample;
  const double seconds = seconds_between(before.at, after.at);
  if (before.cpu && after.cpu && after.cpu->total > before.cpu->total && after.cpu->steal >= before.cpu->steal)
    sample.signals.steal = static_cast<double>(after.cpu->steal - before.cpu->steal) /
                           static_cast<double>(after.cpu->total - before.cpu->total);
  for (const auto& [pid, ticks] : after.ticks) {
    auto earlier = before.ticks.find(pid);
    if (earlier == before.ticks.end() || ticks < earlier->second || seconds <= 0) continue;
    sample.cpu_cores[pid] = static_cast<double>(ticks - earlier->second) / ticks_per_s_ / seconds;
  }
  // The node's figure is its most throttled worker cgroup's.
  for (const auto& [name, counts] : after.throttling) {
    auto earlier = before.throttling.find(name);
    if (earlier == before.throttling.end() || counts.periods <= earlier->second.periods ||
        counts.throttled < earlier->second.throttled)
      continue;
    const double share = std::min(1.0, static_cast<double>(counts.throttled - earlier->second.throttled) /
                                           static_cast<double>(counts.periods - earlier->second.periods));
    if (!sample.signals.throttled || share > *sample.signals.throttled) {
      sample.signals.throttled = share;
      sample.signals.throttled_cgroup = name;
    }
  }
  return sample;
}

const NodeSample& NodeSignalSampler::sample(const std::vector<pid_t>& pids, Clock::time_point now) {
  if (last_ && now - last_->at < kMinWindow) return figures_;
  Reading reading = read(pids, now);
  figures_ = last_ ? figures_between(*last_, reading) : NodeSample{};
  // Pressure is the kernel's own 10 s average: read as it stands, no window needed.
  figures_.signals.cpu_pressure = pressure("cpu");
  figures_.signals.memory_pressure = pressure("memory");
  figures_.signals.io_pressure = pressure("io");
  last_ = std::move(reading);
  return figures_;
}

}  // namespace ddplaunch
