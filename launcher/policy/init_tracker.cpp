// InitTracker: phases of every rank and the group-wide init deadline rule.
#include "policy/init_tracker.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ddplaunch/base/small_math.h"

namespace ddplaunch {

void InitTracker::reset(const std::vector<int>& node_of_rank, PolicyClock::time_point now) {
  ranks_.clear();
  for (std::size_t r = 0; r < node_of_rank.size(); ++r) {
    TrackedRank t;
    t.node = node_of_rank[r];
    t.last.rank = static_cast<int>(r);
    t.since = now;
    ranks_.push_back(t);
  }
}

bool InitTracker::holds(int node, int rank) const {
  return rank >= 0 && rank < world_size() && ranks_[static_cast<std::size_t>(rank)].node == node;
}

InitTracker::Applied InitTracker::update(int node, const RankReport& report, PolicyClock::time_point now) {
  if (!holds(node, report.rank)) return {};  // a rank this node does not hold
  TrackedRank& t = ranks_[static_cast<std::size_t>(report.rank)];
  if (t.last.phase == RankPhase::Exited) return {.held = true};  // its end is final for this generation
  const bool moved = t.last.phase != report.phase || t.last.init_entries != report.init_entries ||
                     t.last.in_debugger() != report.in_debugger();
  if (t.last.phase != report.phase || t.last.init_entries != report.init_entries) t.since = now;
  if (!t.entered_init && report.init_entries > 0) t.entered_init = now;
  t.last = report;
  return {.held = true, .moved = moved};
}

std::optional<PolicyClock::time_point> InitTracker::last_entered_init() const {
  std::optional<PolicyClock::time_point> last;
  for (const auto& t : ranks_) {
    if (!t.entered_init) return std::nullopt;
    if (!last || *t.entered_init > *last) last = t.entered_init;
  }
  return last;
}

int InitTracker::lowest_round() const {
  int lowest = -1;
  for (const auto& t : ranks_) {
    if (t.last.phase == RankPhase::Exited) continue;
    if (lowest < 0 || t.last.init_entries < lowest) lowest = t.last.init_entries;
  }
  return lowest;
}

std::vector<int> InitTracker::ranks_in_judged_init() const {
  std::vector<int> judged;
  const int lowest = lowest_round();
  if (lowest < 1) return judged;  // someone has not entered init at all yet
  for (const auto& t : ranks_)
    if (t.last.phase == RankPhase::Init && t.last.init_entries <= lowest) judged.push_back(t.last.rank);
  return judged;
}

bool InitTracker::deadline_applies() const { return !ranks_in_judged_init().empty(); }

std::optional<InitTracker::Waiting> InitTracker::waiting() const {
  const int lowest = lowest_round();
  if (lowest < 0) return std::nullopt;
  Waiting w;
  bool any = false;
  for (const auto& t : ranks_) {
    if (t.last.phase != RankPhase::Init || t.last.init_entries <= lowest) continue;
    if (!any || t.since < w.since) w.since = t.since;
    any = true;
    ++w.waiting;
  }
  if (!any) return std::nullopt;
  for (const auto& t : ranks_)
    if (t.last.phase != RankPhase::Exited && t.last.init_entries == lowest) w.behind.push_back(t.last.rank);
  return w;
}

std::vector<int> InitTracker::in_setup_longer_than(std::chrono::milliseconds limit, PolicyClock::time_point now) const {
  std::vector<int> late;
  for (const auto& t : ranks_)
    if (t.last.phase == RankPhase::Setup && now - t.since >= limit) late.push_back(t.last.rank);
  return late;
}

std::string name_ranks(const std::vector<int>& ranks, const InitTracker& tracker) {
  constexpr std::size_t kNamed = 8;
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  std::vector<int> nodes;
  for (std::size_t i = 0; i < ranks.size() && i < kNamed; ++i) {
    text += (i ? ", " : "") + std::to_string(ranks[i]);
    int node = ranks[i] >= 0 && ranks[i] < tracker.world_size() ? tracker.ranks()[static_cast<std::size_t>(ranks[i])].node : -1;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  }
  if (ranks.size() > kNamed) text += fmt::format(" and {} more", ranks.size() - kNamed);
  text += nodes.size() == 1 ? " (node " : " (nodes ";
  for (std::size_t i = 0; i < nodes.size(); ++i) text += (i ? ", " : "") + std::to_string(nodes[i]);
  return text + ")";
}

std::string human_duration(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  if (seconds < 10) return fmt::format("{:.1f} s", round_half_away(seconds * 10) / 10);
  if (seconds < 120) return fmt::format("{:.0f} s", round_half_away(seconds));
  if (seconds < 7200) return fmt::format("{:.0f} min", round_half_away(seconds / 60));
  const double rounded = round_half_away(seconds / 60);
  const long minutes = rounded < 9.2e18 ? static_cast<long>(rounded) : 0;
  return fmt::format("{} h {} min", minutes / 60, minutes % 60);
}

bool InitTracker::any_in_debugger() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const TrackedRank& t) { return t.last.in_debugger(); });
}

}  // namespace ddplaunch
