// The job's time account: see time_account.h.
#include "timeline/time_account.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "timeline/rank_transitions.h"

namespace ddplaunch::timeline {

namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;  // [begin, end)

// The intervals merged where they overlap, in time order.
std::vector<Interval> merged(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const auto& i : intervals) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) out.back().second = std::max(out.back().second, i.second);
    else out.push_back(i);
  }
  return out;
}

std::int64_t length(const std::vector<Interval>& disjoint) {
  std::int64_t total = 0;
  for (const auto& i : disjoint) total += i.second - i.first;
  return total;
}

// The part of `span` that none of `disjoint` covers.
std::int64_t uncovered(Interval span, const std::vector<Interval>& disjoint) {
  std::int64_t covered = 0;
  for (const auto& i : disjoint) covered += std::max<std::int64_t>(0, std::min(span.second, i.second) - std::max(span.first, i.first));
  return std::max<std::int64_t>(0, span.second - span.first - covered);
}

bool holds_rank(const std::string& state) { return state == "debugging" || state == "paused"; }

// What one generation's events say.
struct GenerationFacts {
  std::optional<std::int64_t> begin_us;
  std::set<int> ranks;
  std::map<int, std::int64_t> first_step_us, running_us;
  std::optional<std::int64_t> failure_us, hang_us, order_us, first_exit_us;

  // Every rank training: the last rank's first step (or, with no steps shown, its running).
  std::optional<std::int64_t> training_from() const {
    const auto& marks = first_step_us.empty() ? running_us : first_step_us;
    if (ranks.empty() || marks.size() < ranks.size()) return std::nullopt;
    std::int64_t last = 0;
    for (int r : ranks) {
      auto it = marks.find(r);
      if (it == marks.end()) return std::nullopt;
      last = std::max(last, it->second);
    }
    return last;
  }
};

void keep_first(std::optional<std::int64_t>& slot, std::int64_t at) {
  if (!slot) slot = at;
}

std::string seconds_text(std::int64_t us) {
  char text[32];
  const double s = static_cast<double>(us) / 1e6;
  if (s < 60) std::snprintf(text, sizeof text, "%.1fs", s);
  else if (s < 3600) std::snprintf(text, sizeof text, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else std::snprintf(text, sizeof text, "%dh%02dm", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
  return text;
}

}  // namespace

TimeAccount account_time(const std::vector<Event>& events, std::int64_t end_us) {
  TimeAccount account;
  if (events.empty()) return account;
  const std::int64_t start_us = events.front().at_us;
  account.wall_us = std::max<std::int64_t>(0, end_us - start_us);

  std::map<Generation, GenerationFacts> generations;
  std::map<std::pair<int, int>, std::pair<std::string, std::int64_t>> lane_state;  // (node, rank) → state, since
  std::vector<Interval> held, hangs;
  for (const Event& e : events) {
    GenerationFacts& g = generations[e.generation];
    if (e.node == kJobLane && e.type == EventType::State && e.category == "generation") keep_first(g.begin_us, e.at_us);
    if (e.category == "failure") keep_first(g.failure_us, e.at_us);
    if (e.category == "hang") keep_first(g.hang_us, e.at_us);
    if (e.category == "restart" || e.category == "stop") {
      // A restart order carries the generation it starts; it ends the one before.
      Generation ended = e.category == "restart" && e.generation.value > 0 ? Generation{e.generation.value - 1} : e.generation;
      keep_first(generations[ended].order_us, e.at_us);
    }
    if (e.rank == kNodeLane || e.node == kJobLane) continue;
    if (e.category == kProgressCategory && e.name == kFirstStepName) g.first_step_us.try_emplace(e.rank, e.at_us);
    if (e.type != EventType::State) continue;
    g.ranks.insert(e.rank);
    if (e.name == "running") g.running_us.try_emplace(e.rank, e.at_us);
    if (ends_lane(e)) keep_first(g.first_exit_us, e.at_us);
    auto& [state, since] = lane_state[{e.node, e.rank}];
    if (holds_rank(state)) held.emplace_back(since, e.at_us);
    state = e.name;
    since = e.at_us;
  }
  for (const auto& [lane, open] : lane_state) {
    if (holds_rank(open.first)) held.emplace_back(open.second, end_us);
  }

  std::vector<Interval> training;
  for (auto it = generations.begin(); it != generations.end(); ++it) {
    const GenerationFacts& g = it->second;
    const auto next = std::next(it);
    const std::int64_t ends = next != generations.end() && next->second.begin_us ? *next->second.begin_us : end_us;
    if (g.hang_us) hangs.emplace_back(*g.hang_us, ends);
    const auto from = g.training_from();
    if (from) {
      std::int64_t until = ends;
      for (const auto& stop : {g.failure_us, g.hang_us, g.first_exit_us}) {
        if (stop) until = std::min(until, *stop);
      }
      training.emplace_back(*from, until);
    }
    if (it == generations.begin() && from) account.to_start_us = *from - start_us;
    if (next == generations.end()) continue;
    RestartCost cost;
    cost.failed_in = it->first;
    cost.failed_at_us = g.failure_us ? *g.failure_us : g.hang_us ? *g.hang_us : g.order_us ? *g.order_us : ends;
    const auto back = next->second.training_from();
    cost.recovered = back.has_value();
    cost.lost_us = std::max<std::int64_t>(0, (back ? *back : end_us) - cost.failed_at_us);
    account.restarts.push_back(cost);
  }
  for (const auto& [generation, g] : generations) account.progress_seen = account.progress_seen || !g.first_step_us.empty();

  const auto held_merged = merged(held);
  const auto hangs_merged = merged(hangs);
  account.debugger_us = length(held_merged);
  account.hang_us = length(hangs_merged);
  std::vector<Interval> not_training = held_merged;
  not_training.insert(not_training.end(), hangs_merged.begin(), hangs_merged.end());
  const auto excluded = merged(not_training);
  for (const auto& span : merged(training)) account.training_us += uncovered(span, excluded);
  return account;
}

std::string time_account_line(const TimeAccount& account) {
  char share[32];
  std::snprintf(share, sizeof share, "%.1f %%", account.effective_share() * 100.0);
  std::string line = std::string("effective training time ") + share + ": " + seconds_text(account.training_us) +
                     " training of " + seconds_text(account.wall_us) + "; start " +
                     (account.to_start_us ? seconds_text(*account.to_start_us) : std::string("never reached"));
  std::int64_t lost = 0;
  for (const auto& r : account.restarts) lost += r.lost_us;
  line += "; " + std::to_string(account.restarts.size()) + (account.restarts.size() == 1 ? " restart" : " restarts");
  if (!account.restarts.empty()) line += " lost " + seconds_text(lost);
  line += "; debugger " + seconds_text(account.debugger_us) + "; hangs " + seconds_text(account.hang_us);
  if (!account.progress_seen) line += " (no training steps seen: counted from every rank running)";
  return line;
}

std::string time_account_json(const TimeAccount& account) {
  const auto seconds = [](std::int64_t us) { return static_cast<double>(us) / 1e6; };
  nlohmann::json restarts = nlohmann::json::array();
  for (const auto& r : account.restarts) {
    restarts.push_back({{"failed_in_generation", r.failed_in.value}, {"lost_s", seconds(r.lost_us)}, {"recovered", r.recovered}});
  }
  nlohmann::json out = {
      {"wall_s", seconds(account.wall_us)},
      {"time_to_start_s", account.to_start_us ? nlohmann::json(seconds(*account.to_start_us)) : nlohmann::json()},
      {"restarts", restarts},
      {"debugger_s", seconds(account.debugger_us)},
      {"hangs_s", seconds(account.hang_us)},
      {"training_s", seconds(account.training_us)},
      {"effective_training_share", account.effective_share()},
      {"training_steps_seen", account.progress_seen},
  };
  return out.dump();
}

}  // namespace ddplaunch::timeline
