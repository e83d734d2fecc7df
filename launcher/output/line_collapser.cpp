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

// How `rank` may join `waiting` and keep every rank's order: at once when none of its own
// lines waits behind it; by moving its own lines behind it in front of it when they are its
// alone (a merged line cannot move: its other ranks' lines would be reordered); or by moving
// `waiting` behind them when none of its ranks has a line waiting behind it.
LineCollapser::Join LineCollapser::how_to_join(const Waiting& waiting, int rank) const {
  if (std::binary_search(waiting.line.ranks.begin(), waiting.line.ranks.end(), rank)) return Join::No;
  auto own = lines_of_rank_.find(rank);
  if (own == lines_of_rank_.end() || own->second.back()->order < waiting.order) return Join::AsItIs;
  const bool own_lines_alone = std::all_of(own->second.rbegin(), own->second.rend(), [&](const Place& line) {
    return line->order < waiting.order || line->line.ranks.size() == 1;
  });
  if (own_lines_alone) return Join::OwnLinesInFront;
  const bool newest_of_its_ranks = std::all_of(waiting.line.ranks.begin(), waiting.line.ranks.end(), [&](int member) {
    auto lines = lines_of_rank_.find(member);
    return lines != lines_of_rank_.end() && lines->second.back()->order == waiting.order;
  });
  return newest_of_its_ranks ? Join::ItMovesBehind : Join::No;
}

// The rank's lines behind `place` (its alone) move, in their order, right in front of it.
void LineCollapser::move_own_lines_in_front(int rank, Place place) {
  const auto& own = lines_of_rank_.at(rank);
  auto first_behind = std::find_if(own.begin(), own.end(), [&](const Place& line) { return line->order > place->order; });
  const long count = own.end() - first_behind;
  for (auto it = first_behind; it != own.end(); ++it) waiting_.splice(place, waiting_, *it);
  Place first_moved = *first_behind;
  const long low = first_moved == waiting_.begin() ? place->order - kOrderGap : std::prev(first_moved)->order;
  const long high = place->order;
  if (high - low <= count) {
    renumber();
    return;
  }
  long i = 0;
  for (auto it = first_behind; it != own.end(); ++it) (*it)->order = low + (high - low) * ++i / (count + 1);
}

void LineCollapser::renumber() {
  next_order_ = 0;
  for (auto& waiting : waiting_) {
    waiting.order = next_order_;
    next_order_ += kOrderGap;
  }
}

std::vector<LineCollapser::Line> LineCollapser::add(int rank, OutputStream stream, std::string_view text,
                                                    Clock::time_point now) {
  const std::string key = key_of(stream, text);
  // The earliest identical waiting line this rank may join.
  std::optional<Place> join;
  Join how = Join::No;
  auto [first, last] = by_text_.equal_range(key);
  for (auto it = first; it != last; ++it) {
    if (join && it->second->order > (*join)->order) continue;
    if (Join way = how_to_join(*it->second, rank); way != Join::No) {
      join = it->second;
      how = way;
    }
  }
  if (join) {
    Place place = *join;
    if (how == Join::OwnLinesInFront) move_own_lines_in_front(rank, place);
    if (how == Join::ItMovesBehind) {
      waiting_.splice(waiting_.end(), waiting_, place);  // behind this rank's own waiting lines
      place->order = next_order_;
      next_order_ += kOrderGap;
    }
    Line& line = place->line;
    line.ranks.insert(std::upper_bound(line.ranks.begin(), line.ranks.end(), rank), rank);
    lines_of_rank_[rank].push_back(place);
    return {};
  }
  waiting_.push_back(Waiting{Line{stream, std::string(text), {rank}}, now, next_order_});
  next_order_ += kOrderGap;
  Place place = std::prev(waiting_.end());
  by_text_.emplace(key, place);
  lines_of_rank_[rank].push_back(place);
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
  auto own = lines_of_rank_.find(rank);
  if (own == lines_of_rank_.end()) return {};
  return take_through(own->second.back());
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
    // Taken in the list's order, a line is the first waiting one of each of its ranks.
    for (int rank : place->line.ranks)
      if (auto own = lines_of_rank_.find(rank); own != lines_of_rank_.end() && own->second.front() == place) {
        own->second.pop_front();
        if (own->second.empty()) lines_of_rank_.erase(own);
      }
    out.push_back(std::move(place->line));
    waiting_.pop_front();
  }
  if (waiting_.empty()) next_order_ = 0;
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
