// Slurm hostlist expansion: parse each item into literal text and bracket groups,
// check the size of the cartesian product against the cap, then generate the names.
#include "ddplaunch/cluster/hostlist.h"

#include <charconv>
#include <cstdint>

#include <fmt/format.h>

namespace ddplaunch::cluster {
namespace {

struct Range {
  std::uint64_t lo = 0, hi = 0;
  std::size_t width = 0;  // digits of the start, for zero padding
};

// One item is a sequence of parts; a part is literal text or a bracket group.
struct Part {
  std::string text;
  std::vector<Range> ranges;  // empty for a literal part
};

constexpr std::size_t kMaxDigits = 18;  // keeps every number below 2^63

std::string fail(std::string_view list, std::size_t pos, std::string_view what,
                 std::string_view hint) {
  return fmt::format("hostlist \"{}\": {} at position {}; {}", list, what, pos + 1, hint);
}

// Parses NUMBER at list[pos, end); returns the number of digits read (0 = none).
std::size_t read_number(std::string_view list, std::size_t pos, std::size_t end,
                        std::uint64_t& value) {
  std::size_t n = 0;
  while (pos + n < end && list[pos + n] >= '0' && list[pos + n] <= '9') ++n;
  if (n == 0 || n > kMaxDigits) return n == 0 ? 0 : n;
  std::from_chars(list.data() + pos, list.data() + pos + n, value);
  return n;
}

// Parses the inside of one bracket group, list[begin, end), into ranges.
std::optional<std::string> parse_group(std::string_view list, std::size_t begin,
                                       std::size_t end, std::vector<Range>& out) {
  if (begin == end)
    return fail(list, begin - 1, "empty brackets \"[]\"",
                "write at least one number or range, e.g. n[1-4]");
  std::size_t pos = begin;
  while (pos <= end) {
    std::size_t elem_end = list.find(',', pos);
    if (elem_end == std::string_view::npos || elem_end > end) elem_end = end;
    std::string_view elem = list.substr(pos, elem_end - pos);
    if (elem.empty())
      return fail(list, pos, "empty element inside brackets",
                  "remove the extra comma, e.g. n[1,3] not n[1,,3]");
    Range r;
    std::size_t n = read_number(list, pos, elem_end, r.lo);
    std::size_t after = pos + n;
    bool bad = n == 0 || n > kMaxDigits;
    if (!bad && after < elem_end) {
      if (list[after] != '-') {
        bad = true;
      } else {
        std::size_t m = read_number(list, after + 1, elem_end, r.hi);
        bad = m == 0 || m > kMaxDigits || after + 1 + m != elem_end;
      }
    } else {
      r.hi = r.lo;
    }
    if (bad)
      return fail(list, pos, fmt::format("\"{}\" is not a number or a range", elem),
                  "brackets hold numbers and ranges such as 01-04 (at most 18 digits)");
    if (r.lo > r.hi)
      return fail(list, pos, fmt::format("reversed range \"{}\"", elem),
                  "the start of a range must not exceed its end");
    r.width = n;
    out.push_back(r);
    pos = elem_end + 1;
  }
  return std::nullopt;
}

// Parses one comma-separated item, list[begin, end), into parts.
std::optional<std::string> parse_item(std::string_view list, std::size_t begin,
                                      std::size_t end, std::vector<Part>& parts) {
  std::size_t pos = begin;
  while (pos < end) {
    if (list[pos] == '[') {
      std::size_t close = list.find_first_of("[]", pos + 1);
      if (close == std::string_view::npos || close >= end || list[close] == '[')
        return fail(list, pos, "unbalanced \"[\" (no matching \"]\")",
                    "close every bracket group, e.g. n[1-4]");
      Part p;
      if (auto err = parse_group(list, pos + 1, close, p.ranges)) return err;
      parts.push_back(std::move(p));
      pos = close + 1;
    } else if (list[pos] == ']') {
      return fail(list, pos, "unbalanced \"]\" (no matching \"[\")",
                  "open every bracket group, e.g. n[1-4]");
    } else {
      std::size_t next = list.find_first_of("[]", pos);
      if (next == std::string_view::npos || next > end) next = end;
      parts.push_back(Part{std::string(list.substr(pos, next - pos)), {}});
      pos = next;
    }
  }
  return std::nullopt;
}

// Appends every name of `parts` to `out` (rightmost group varies fastest).
void generate(const std::vector<Part>& parts, std::size_t index, std::string& prefix,
              std::vector<std::string>& out) {
  if (index == parts.size()) {
    out.push_back(prefix);
    return;
  }
  const Part& p = parts[index];
  std::size_t keep = prefix.size();
  if (p.ranges.empty()) {
    prefix += p.text;
    generate(parts, index + 1, prefix, out);
  } else {
    for (const Range& r : p.ranges) {
      for (std::uint64_t v = r.lo;; ++v) {
        prefix += fmt::format("{:0{}}", v, r.width);
        generate(parts, index + 1, prefix, out);
        prefix.resize(keep);
        if (v == r.hi) break;
      }
    }
  }
  prefix.resize(keep);
}

}  // namespace

HostlistResult expand_hostlist(std::string_view list, std::size_t max_hosts) {
  HostlistResult result;
  std::size_t first = list.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return result;
  std::size_t last = list.find_last_not_of(" \t\r\n") + 1;

  std::vector<std::vector<Part>> items;
  std::size_t total = 0;
  std::size_t pos = first;
  while (pos <= last) {
    // An item ends at the first comma outside brackets.
    std::size_t end = pos;
    bool inside = false;
    while (end < last && (inside || list[end] != ',')) {
      if (list[end] == '[') inside = true;
      if (list[end] == ']') inside = false;
      ++end;
    }
    if (end > pos) {
      std::vector<Part> parts;
      if (auto err = parse_item(list, pos, end, parts)) {
        result.error = std::move(err);
        return result;
      }
      // Size of this item's expansion, refusing before anything is allocated.
      std::size_t count = 1;
      for (const Part& p : parts) {
        if (p.ranges.empty()) continue;
        std::size_t group = 0;
        for (const Range& r : p.ranges) {
          std::uint64_t span = r.hi - r.lo + 1;
          group = span > max_hosts ? max_hosts + 1 : group + span;
          if (group > max_hosts) break;
        }
        count = group > max_hosts ? max_hosts + 1 : count * group;
        if (count > max_hosts) break;
      }
      total += count;
      if (total > max_hosts) {
        result.error = fail(list, pos,
                            fmt::format("\"{}\" takes the list past {} hosts",
                                        list.substr(pos, end - pos), max_hosts),
                            "this is far more than a job allocates; check the ranges");
        return result;
      }
      items.push_back(std::move(parts));
    }
    pos = end + 1;
  }

  result.hosts.reserve(total);
  std::string prefix;
  for (const auto& parts : items) generate(parts, 0, prefix, result.hosts);
  return result;
}

}  // namespace ddplaunch::cluster
