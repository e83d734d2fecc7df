// Parsing and printing of kernel CPU lists.
#include "placement/cpu_list.h"

#include <algorithm>
#include <charconv>
#include <iterator>

#include <fmt/format.h>

namespace ddplaunch::placement {

namespace {
constexpr int kMaxCpuIndex = 1 << 20;  // bounds a hostile or corrupt "0-2000000000"

std::optional<int> parse_index(std::string_view text) {
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > kMaxCpuIndex) return std::nullopt;
  return value;
}
}  // namespace

std::optional<CpuList> parse_cpu_list(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  CpuList out;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    auto dash = item.find('-');
    auto first = parse_index(item.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : parse_index(item.substr(dash + 1));
    if (!first || !last || *last < *first) return std::nullopt;
    for (int cpu = *first; cpu <= *last; ++cpu) out.push_back(cpu);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string format_cpu_list(const CpuList& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

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
