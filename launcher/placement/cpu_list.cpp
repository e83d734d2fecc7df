// Parsing and printing of kernel CPU lists.
#include "placement/cpu_list.h"

#include "ddplaunch/base/index_list.h"

#include <algorithm>
#include <iterator>

namespace ddplaunch::placement {

namespace {
constexpr int kMaxCpuIndex = 1 << 20;  // bounds a hostile or corrupt "0-2000000000"
}  // namespace

std::optional<CpuList> parse_cpu_list(std::string_view text) { return parse_index_list(text, kMaxCpuIndex); }

std::string format_cpu_list(const CpuList& cpus) { return format_index_list(cpus); }

CpuList intersect(const CpuList& a, const CpuList& b) {
  CpuList out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

CpuList unite(const CpuList& a, const CpuList& b) {
  CpuList out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace ddplaunch::placement
