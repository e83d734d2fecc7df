// Expansion of Slurm hostlist expressions ("n[01-04,07],gpu-a[1-2]") into host names.
// Follows Slurm's grammar: comma-separated items, bracket groups of numbers and ranges,
// zero padding taken from the range start, several bracket groups multiply out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddplaunch::cluster {

// Default cap on the number of hosts one expression may expand to (Slurm's own
// MAX_RANGE is 64K); a larger result is reported as an error, never allocated.
inline constexpr std::size_t kMaxHostlistHosts = 65536;

struct HostlistResult {
  std::vector<std::string> hosts;    // in Slurm's order, duplicates kept
  std::optional<std::string> error;  // set when the expression is malformed; hosts is then empty
  bool ok() const { return !error.has_value(); }
};

// Expands `list`. Grammar (as Slurm's hostlist_create):
//   list  := item ("," item)*          empty items ("a,,b", a trailing ",") are skipped
//   item  := (text | "[" group "]")+   text: any characters but "[],"
//   group := elem ("," elem)*          elem := NUMBER | NUMBER "-" NUMBER
// A range keeps the width of its start: n[01-10] -> n01..n10, n[8-10] -> n8,n9,n10.
// r[1-2]n[1-2] -> r1n1,r1n2,r2n1,r2n2 (the rightmost group varies fastest).
// Leading/trailing whitespace of the whole list is ignored; "" expands to no hosts.
// Errors name the offending text and its 1-based character position in `list`.
HostlistResult expand_hostlist(std::string_view list, std::size_t max_hosts = kMaxHostlistHosts);

}  // namespace ddplaunch::cluster
