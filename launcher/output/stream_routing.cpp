// torchrun's stream specs and the routing rule.
#include "output/stream_routing.h"

#include <algorithm>

#include <charconv>
#include <optional>

namespace ddplaunch {

namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<int> parse_std(std::string_view text) {
  auto value = parse_int(text);
  return value && *value >= 0 && *value <= 3 ? value : std::nullopt;
}

// Calls visit(rank, streams) for each "R:S" item; false at the first malformed one.
template <typename Visit>
bool for_each_item(std::string_view spec, Visit visit) {
  while (true) {
    auto comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    auto colon = item.find(':');
    if (colon == std::string_view::npos) return false;
    auto rank = parse_int(item.substr(0, colon));
    auto streams = parse_std(item.substr(colon + 1));
    if (!rank || *rank < 0 || !streams) return false;
    visit(*rank, *streams);
    if (comma == std::string_view::npos) return true;
    spec.remove_prefix(comma + 1);
  }
}

}  // namespace

std::string stream_spec_problem(std::string_view spec) {
  if (spec.empty() || parse_std(spec) || for_each_item(spec, [](int, int) {})) return {};
  return "'" + std::string(spec) +
         "' is not torchrun's 0..3 (0 none, 1 stdout, 2 stderr, 3 both) or a LOCAL_RANK:0..3 list like 0:1,1:2";
}

int streams_for_rank(std::string_view spec, int local_rank) {
  if (auto all = parse_std(spec)) return *all;
  int found = 0;
  for_each_item(spec, [&](int rank, int streams) {
    if (rank == local_rank) found = streams;
  });
  return found;
}

bool shown_by_filters(int local_rank, int global_rank, const std::vector<int>& local_ranks_filter,
                      const std::vector<int>& ranks_filter) {
  auto lists = [](const std::vector<int>& filter, int rank) {
    return filter.empty() || std::find(filter.begin(), filter.end(), rank) != filter.end();
  };
  return lists(local_ranks_filter, local_rank) && lists(ranks_filter, global_rank);
}

StreamRouting route_streams(std::string_view redirects, std::string_view tee, bool have_log_dir, int local_rank,
                            bool shown_by_filter) {
  StreamRouting r;
  if (redirects.empty() && tee.empty()) {
    r.stdout_to_file = r.stderr_to_file = have_log_dir;
  } else {
    const int redirected = streams_for_rank(redirects, local_rank);
    const int teed = streams_for_rank(tee, local_rank);
    const int to_file = redirected | teed;
    const int to_terminal = ~redirected | teed;  // a stream both redirected and teed is still shown
    r.stdout_to_file = to_file & 1;
    r.stderr_to_file = to_file & 2;
    r.stdout_to_terminal = to_terminal & 1;
    r.stderr_to_terminal = to_terminal & 2;
  }
  r.stdout_to_terminal = r.stdout_to_terminal && shown_by_filter;
  r.stderr_to_terminal = r.stderr_to_terminal && shown_by_filter;
  return r;
}

bool streams_need_files(std::string_view redirects, std::string_view tee) {
  for (auto spec : {redirects, tee}) {
    if (auto all = parse_std(spec); all && *all != 0) return true;
    bool any = false;
    if (!spec.empty() && !parse_std(spec)) for_each_item(spec, [&](int, int streams) { any = any || streams != 0; });
    if (any) return true;
  }
  return false;
}

}  // namespace ddplaunch
