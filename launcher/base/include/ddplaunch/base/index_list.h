// Lists of small non-negative integers in the kernel's range form ("0-3,8,10-11"): CPU and
// NUMA-node lists (sysfs, taskset, numactl), and the rank sets a person types ("0,4-7").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddplaunch {

using IndexList = std::vector<int>;  // sorted, no repeats

// nullopt when the text is not such a list or names an index above `max_index` (a hostile or
// corrupt "0-2000000000" is refused, not expanded); "" and "\n" are the empty list.
std::optional<IndexList> parse_index_list(std::string_view text, int max_index);
std::string format_index_list(const IndexList& indexes);

}  // namespace ddplaunch
