// torchrun's stream specs and the routing rule.
#include "output/stream_routing.h"

#include <algorithm>
#include <charconv>

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

// "R:S,R:S,...": nothing at the first malformed item.
std::optional<std::vector<std::pair<int, int>>> parse_items(std::string_view spec) {
  std::vector<std::pair<int, int>> items;
  while (true) {
    auto comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    auto colon = item.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    auto rank = parse_int(item.substr(0, colon));
    auto streams = parse_std(item.substr(colon + 1));
    if (!rank || *rank < 0 || !streams) return std::nullopt;
    items.emplace_back(*rank, *streams);
    if (comma == std::string_view::npos) return items;
    spec.remove_prefix(comma + 1);
  }
}

}  // namespace

std::optional<StreamSpec> parse_stream_spec(std::string_view text) {
  StreamSpec spec;
  if (text.empty()) return spec;
  if ((spec.every_rank = parse_std(text))) return spec;
  auto items = parse_items(text);
  if (!items) return std::nullopt;
  spec.per_rank = std::move(*items);
  return spec;
}

std::string stream_spec_text(const StreamSpec& spec) {
  if (spec.every_rank) return std::to_string(*spec.every_rank);
  std::string text;
  for (const auto& [rank, streams] : spec.per_rank)
    text += (text.empty() ? "" : ",") + std::to_string(rank) + ":" + std::to_string(streams);
  return text;
}

std::string stream_spec_choices() {
  return "torchrun's 0..3 (0 none, 1 stdout, 2 stderr, 3 both) or a LOCAL_RANK:0..3 list like 0:1,1:2";
}

std::string stream_spec_problem(std::string_view text) {
  if (parse_stream_spec(text)) return {};
  return "'" + std::string(text) + "' is not " + stream_spec_choices();
}

int StreamSpec::streams_for(int local_rank) const {
  if (every_rank) return *every_rank;
  int found = 0;
  for (const auto& [rank, streams] : per_rank)
    if (rank == local_rank) found = streams;  // the last mention wins, as torchrun's dict does
  return found;
}

bool StreamSpec::names_a_stream() const {
  if (every_rank) return *every_rank != 0;
  return std::any_of(per_rank.begin(), per_rank.end(), [](const auto& item) { return item.second != 0; });
}

bool shown_by_filters(int local_rank, int global_rank, const std::vector<int>& local_ranks_filter,
                      const std::vector<int>& ranks_filter) {
  auto lists = [](const std::vector<int>& filter, int rank) {
    return filter.empty() || std::find(filter.begin(), filter.end(), rank) != filter.end();
  };
  return lists(local_ranks_filter, local_rank) && lists(ranks_filter, global_rank);
}

StreamRouting route_streams(const StreamSpec& redirects, const StreamSpec& tee, bool have_log_dir, int local_rank,
                            bool shown_by_filter) {
  StreamRouting r;
  if (!redirects.given() && !tee.given()) {
    r.stdout_to_file = r.stderr_to_file = have_log_dir;
  } else {
    const int redirected = redirects.streams_for(local_rank);
    const int teed = tee.streams_for(local_rank);
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

bool streams_need_files(const StreamSpec& redirects, const StreamSpec& tee) {
  return redirects.names_a_stream() || tee.names_a_stream();
}

}  // namespace ddplaunch
