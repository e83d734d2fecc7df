// LineCollapser: see line_collapser.h.
#include "output/line_collapser.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "ddplaunch/base/index_list.h"

namespace ddplaunch {

std::string LineCollapser::key_of(OutputStream stream, std::string_view text) {
  std::string key(1, stream == OutputStream::Stdout ? 'o' : 'e');
  key.append(text);
  return key;
}

// `rank` may join `waiting` without reordering its own lines: none of them waits behind it,
// or it can move behind them because none of its own ranks has a line waiting behind it.
bool LineCollapser::may_join(const Waiting& waiting, int rank) const {
  if (std::binary_search(waiting.line.ranks.begin(), waiting.line.ranks.end(), rank)) return false;
  auto newest = newest_of_rank_.find(rank);
  if (newest == newest_of_rank_.end() || newest->second->order < waiting.order) return true;
  return std::all_of(waiting.line.ranks.begin(), waiting.line.ranks.end(), [&](int member) {
    auto it = newest_of_rank_.find(member);
    return it != newest_of_rank_.end() && it->second->order == waiting.order;
  });
}

std::vector<LineCollapser::Line> LineCollapser::add(int rank, OutputStream stream, std::string_view text,
                                                    Clock::time_point now) {
  const std::string key = key_of(stream, text);
  // The earliest identical waiting line this rank may join.
  std::optional<Place> join;
  auto [first, last] = by_text_.equal_range(key);
  for (auto it = first; it != last; ++it)
    if ((!join || it->second->order < (*join)->order) && may_join(*it->second, rank)) join = it->second;
  if (join) {
    Place place = *join;
    auto newest = newest_of_rank_.find(rank);
    if (newest != newest_of_rank_.end() && newest->second->order > place->order) {
      waiting_.splice(waiting_.end(), waiting_, place);  // behind this rank's own waiting lines
      place->order = next_order_++;
    }
    Line& line = place->line;
    line.ranks.insert(std::upper_bound(line.ranks.begin(), line.ranks.end(), rank), rank);
    newest_of_rank_[rank] = place;
    return {};
  }
  waiting_.push_back(Waiting{Line{stream, std::string(text), {rank}}, now, next_order_++});
  Place place = std::prev(waiting_.end());
  by_text_.emplace(key, place);
  newest_of_rank_[rank] = place;
  oldest_since_ = std::min(oldest_since_, now);
  if (waiting_.size() > kMaxWaiting) return take_through(waiting_.begin());
  return {};
}

std::vector<LineCollapser::Line> LineCollapser::due(Clock::time_point now) {
  // The last waiting line whose window ended; every line before it goes with it (in order).
  auto last = waiting_.end();
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
    if (now - it->since >= window_) last = it;
  if (last == waiting_.end()) return {};
  return take_through(last);
}

std::vector<LineCollapser::Line> LineCollapser::flush() {
  if (waiting_.empty()) return {};
  return take_through(std::prev(waiting_.end()));
}

std::vector<LineCollapser::Line> LineCollapser::flush_through(int rank) {
  auto it = newest_of_rank_.find(rank);
  if (it == newest_of_rank_.end()) return {};
  return take_through(it->second);
}

LineCollapser::Clock::time_point LineCollapser::next_due() const {
  return waiting_.empty() ? Clock::time_point::max() : oldest_since_ + window_;
}

std::vector<LineCollapser::Line> LineCollapser::take_through(Place last) {
  std::vector<Line> out;
  const long last_order = last->order;
  while (!waiting_.empty() && waiting_.front().order <= last_order) {
    Place place = waiting_.begin();
    auto [first, end] = by_text_.equal_range(key_of(place->line.stream, place->line.text));
    for (auto it = first; it != end; ++it)
      if (it->second == place) {
        by_text_.erase(it);
        break;
      }
    for (int rank : place->line.ranks)
      if (auto it = newest_of_rank_.find(rank); it != newest_of_rank_.end() && it->second == place)
        newest_of_rank_.erase(it);
    out.push_back(std::move(place->line));
    waiting_.pop_front();
  }
  oldest_since_ = Clock::time_point::max();
  for (const auto& w : waiting_) oldest_since_ = std::min(oldest_since_, w.since);
  return out;
}

std::string collapsed_prefix(int node_rank, int node_count, const std::vector<int>& ranks) {
  if (ranks.size() == 1) return worker_prefix(node_rank, node_count, ranks.front());
  const std::string listed = format_index_list(ranks);
  return node_count > 1 ? fmt::format("[node {} ranks {}]", node_rank, listed) : fmt::format("[ranks {}]", listed);
}

}  // namespace ddplaunch
