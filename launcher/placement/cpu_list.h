// CPU and NUMA-node lists in the kernel's text form ("0-3,8,10-11"), as sysfs, taskset,
// numactl and /proc/PID/status (Cpus_allowed_list) write them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddplaunch::placement {

using CpuList = std::vector<int>;  // sorted, no repeats (base/index_list.h)

// nullopt when the text is not such a list; "" and "\n" are the empty list.
std::optional<CpuList> parse_cpu_list(std::string_view text);
std::string format_cpu_list(const CpuList& cpus);

CpuList intersect(const CpuList& a, const CpuList& b);
CpuList unite(const CpuList& a, const CpuList& b);

}  // namespace ddplaunch::placement
