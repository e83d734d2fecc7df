// HangTracker: see hang_tracker.h.
#include "policy/hang_tracker.h"

#include <algorithm>

#include <fmt/format.h>

namespace ddplaunch {

namespace {

double seconds_between(PolicyClock::time_point from, PolicyClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

void HangTracker::reset(int world, PolicyClock::time_point now, PolicyClock::duration report_period) {
  ranks_.assign(static_cast<std::size_t>(std::max(world, 0)), Rank{});
  for (auto& r : ranks_) r.last_progress = r.last_reported = now;
  generation_start_ = now;
  report_period_ = std::max(report_period, PolicyClock::duration::zero());
}

void HangTracker::on_reported(int rank, PolicyClock::time_point now) {
  if (rank < 0 || rank >= static_cast<int>(ranks_.size())) return;
  Rank& r = ranks_[static_cast<std::size_t>(rank)];
  r.last_reported = std::max(r.last_reported, now);
}

double HangTracker::silent_s(const Rank& r, PolicyClock::time_point now) const {
  const PolicyClock::time_point heard = std::max(r.last_reported, r.last_progress);
  const PolicyClock::duration unknown = std::clamp(now - heard, PolicyClock::duration::zero(), report_period_);
  return std::max(0.0, seconds_between(r.last_progress, now) - std::chrono::duration<double>(unknown).count());
}

void HangTracker::on_step(int rank, long steps, long max_interval_ms, PolicyClock::time_point now) {
  if (rank < 0 || rank >= static_cast<int>(ranks_.size())) return;
  Rank& r = ranks_[static_cast<std::size_t>(rank)];
  if (steps <= r.steps) return;  // a duplicate or stale report is not progress
  r.steps = steps;
  r.last_progress = now;
  r.suspect_reported = r.hang_reported = false;
  if (steps > settings_.warmup_steps) {
    const double reported_s = static_cast<double>(std::max(max_interval_ms, 0L)) / 1000.0;
    learnt_interval_s_ = std::max(learnt_interval_s_, std::min(reported_s, seconds_between(generation_start_, now)));
  }
}

void HangTracker::on_section(int rank, bool begin, const std::string& name, PolicyClock::time_point now) {
  if (rank < 0 || rank >= static_cast<int>(ranks_.size())) return;
  Rank& r = ranks_[static_cast<std::size_t>(rank)];
  if (begin) {
    r.section = name;
    r.section_since = now;
  } else if (!r.section.empty()) {
    double& longest = longest_section_s_[r.section];
    longest = std::max(longest, seconds_between(r.section_since, now));
    r.section.clear();
    // The others waited for it (in their next collective): their clocks start again now, or
    // the first check after the section would find them silent since before it began.
    for (auto& other : ranks_) {
      if (other.last_progress >= now) continue;
      other.last_progress = now;
      other.suspect_reported = other.hang_reported = false;
    }
  }
  r.last_progress = now;  // entering or leaving a section is progress
  r.suspect_reported = r.hang_reported = false;
}

std::vector<int> HangTracker::suspect_ranks() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < ranks_.size(); ++i)
    if (ranks_[i].alive && ranks_[i].suspect_reported) out.push_back(static_cast<int>(i));
  return out;
}

void HangTracker::on_exit(int rank) {
  if (rank >= 0 && rank < static_cast<int>(ranks_.size())) ranks_[static_cast<std::size_t>(rank)].alive = false;
}

std::string HangTracker::interval_origin() const {
  const double seeded = settings_.seeded_interval_s;
  if (learnt_interval_s_ <= 0 && seeded <= 0) return "no step interval learnt yet";
  if (seeded > learnt_interval_s_)
    return fmt::format("largest step {:.2f} s, {}", seeded, settings_.seeded_from.empty() ? "from history" : settings_.seeded_from);
  return fmt::format("largest step {:.2f} s seen in this run", learnt_interval_s_);
}

HangLimits HangTracker::limits() const {
  const double interval = std::max(learnt_interval_s_, settings_.seeded_interval_s);
  HangLimits l;
  l.suspect_s = std::max(settings_.suspect_floor_s, settings_.suspect_factor * interval);
  l.hang_s = std::max(settings_.hang_minimum_s, settings_.hang_factor * interval);
  l.explained = fmt::format("suspect after {} without progress (max of the floor {} and {:g} x step), "
                            "hang after {} (max of the minimum {} and {:g} x step); {}",
                            human_duration(l.suspect_s), human_duration(settings_.suspect_floor_s), settings_.suspect_factor,
                            human_duration(l.hang_s), human_duration(settings_.hang_minimum_s), settings_.hang_factor,
                            interval_origin());
  return l;
}

HangLimits HangTracker::section_limits(const std::string& name) const {
  auto it = longest_section_s_.find(name);
  const double longest = it == longest_section_s_.end() ? 0 : it->second;
  HangLimits l;
  l.suspect_s = std::max(settings_.section_suspect_floor_s, settings_.suspect_factor * longest);
  l.hang_s = std::max(settings_.section_hang_minimum_s, settings_.hang_factor * longest);
  l.explained = fmt::format("section '{}': suspect after {}, hang after {} ({})", name, human_duration(l.suspect_s),
                            human_duration(l.hang_s),
                            longest > 0 ? fmt::format("longest '{}' so far {}", name, human_duration(longest))
                                        : std::string("first time seen: floors only"));
  return l;
}

void HangTracker::hold(bool held, PolicyClock::time_point now) {
  if (held == held_) return;
  held_ = held;
  if (held) return;
  for (Rank& r : ranks_) {
    r.last_progress = now;
    if (!r.section.empty()) r.section_since = now;
    r.suspect_reported = r.hang_reported = false;
  }
}

std::vector<HangEvent> HangTracker::check(PolicyClock::time_point now) {
  quiet_ranks_.clear();
  if (held_) return {};
  // Group the findings by level and section, so one message names every rank concerned.
  std::map<std::pair<int, std::string>, HangEvent> found;
  // Ranks outside a section may be waiting for one inside it: its limits apply to them too.
  std::optional<HangLimits> waited_for;
  for (const auto& r : ranks_)
    if (r.alive && !r.section.empty()) {
      HangLimits l = section_limits(r.section);
      if (!waited_for || l.suspect_s + l.hang_s > waited_for->suspect_s + waited_for->hang_s) waited_for = l;
    }
  // The limits outside sections, worded once per check, not once per rank (16384 ranks a second).
  const HangLimits outside = limits();
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    Rank& r = ranks_[i];
    if (!r.alive || (r.steps == 0 && r.section.empty())) continue;  // not training yet: init/setup rules
    HangLimits l = r.section.empty() ? outside : section_limits(r.section);
    if (r.section.empty() && waited_for &&
        (waited_for->suspect_s > l.suspect_s || waited_for->hang_s > l.hang_s)) {
      l.suspect_s = std::max(l.suspect_s, waited_for->suspect_s);
      l.hang_s = std::max(l.hang_s, waited_for->hang_s);
      l.explained = "waiting for a rank in a section: " + waited_for->explained;
    }
    const double silent = silent_s(r, now);
    if (silent >= l.suspect_s / 2) quiet_ranks_.push_back(static_cast<int>(i));
    HangEvent::Level level;
    if (silent >= l.hang_s && !r.hang_reported) {
      level = HangEvent::Level::Hang;
      r.hang_reported = r.suspect_reported = true;
    } else if (silent >= l.suspect_s && !r.suspect_reported) {
      level = HangEvent::Level::Suspect;
      r.suspect_reported = true;
    } else {
      continue;
    }
    HangEvent& e = found[{static_cast<int>(level), r.section}];
    e.level = level;
    e.section = r.section;
    e.ranks.push_back(static_cast<int>(i));
    e.silent_s = std::max(e.silent_s, silent);
    e.text = l.explained;
  }
  std::vector<HangEvent> out;
  for (auto& [key, e] : found) {
    std::string ranks;
    for (int rank : e.ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(rank);
    const bool hang = e.level == HangEvent::Level::Hang;
    e.text = fmt::format("{} {} {} made no progress for {}{} — {}{}", hang ? "hang:" : "suspect:",
                         e.ranks.size() == 1 ? "rank" : "ranks", ranks, human_duration(e.silent_s),
                         e.section.empty() ? "" : " inside section '" + e.section + "'", e.text,
                         hang ? "" : "; only reported: nothing is stopped at this level");
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace ddplaunch
