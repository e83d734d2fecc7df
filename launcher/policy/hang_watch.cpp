// HangWatch: rank reports → HangTracker events (see hang_watch.h).
#include "policy/hang_watch.h"

#include <algorithm>

#include <fmt/format.h>

namespace ddplaunch {

void HangWatch::on_generation(Generation generation, int world, TimePoint now, PolicyClock::duration report_period) {
  generation_ = generation;
  tracker_.reset(world, now, report_period);
  sections_.assign(static_cast<std::size_t>(std::max(world, 0)), std::string());
  in_debugger_.assign(sections_.size(), false);
  in_debugger_count_ = 0;
  interval_spans_hold_.assign(sections_.size(), false);
  steps_.assign(sections_.size(), 0);
  running_since_.assign(sections_.size(), std::nullopt);
  progressed_.assign(sections_.size(), false);
}

void HangWatch::on_ranks_reported(Generation generation, const std::vector<RankReport>& ranks, TimePoint now) {
  if (generation != generation_) return;  // a late report about an older generation
  for (const RankReport& r : ranks) {
    if (r.rank < 0 || r.rank >= static_cast<int>(sections_.size())) continue;
    const auto index = static_cast<std::size_t>(r.rank);
    const bool in_debugger = r.in_debugger() && r.phase != RankPhase::Exited;
    if (in_debugger != in_debugger_[index]) in_debugger_count_ += in_debugger ? 1 : -1;
    in_debugger_[index] = in_debugger;
    if (r.phase == RankPhase::Exited) {
      tracker_.on_exit(r.rank);
      continue;
    }
    tracker_.on_reported(r.rank, now);
    if (r.phase == RankPhase::Running && !running_since_[index]) running_since_[index] = now;
    if (r.progress_age_ms < 0) continue;  // no step or section yet: the init rules apply
    progressed_[index] = true;
    // The node measured when the progress happened; the report only carries it here.
    const TimePoint at = now - std::chrono::milliseconds(r.progress_age_ms);
    // The step that spans a hold ends with the first report whose step count moved on; the
    // reports between the release and that step (a rank still waiting in its collective) must
    // not clear the mark, or that step's interval would be learnt.
    if (r.steps > steps_[index]) {
      const bool spans_hold = interval_spans_hold_[index] || tracker_.held();
      interval_spans_hold_[index] = tracker_.held();
      steps_[index] = r.steps;
      tracker_.on_step(r.rank, r.steps, spans_hold ? 0 : r.max_interval_ms, at);
    }
    std::string& open = sections_[static_cast<std::size_t>(r.rank)];
    if (r.section == open) continue;
    if (!open.empty()) tracker_.on_section(r.rank, false, open, at);
    if (!r.section.empty()) tracker_.on_section(r.rank, true, r.section, at);
    open = r.section;
  }
  const bool held = in_debugger_count_ > 0;  // counted, not sought: one report must not cost every rank
  if (held && !tracker_.held()) std::fill(interval_spans_hold_.begin(), interval_spans_hold_.end(), true);
  tracker_.hold(held, now);
}

std::optional<std::string> HangWatch::unwatched_note(TimePoint now) {
  if (unwatched_said_) return std::nullopt;
  const auto floor = std::chrono::duration<double>(tracker_.settings().suspect_floor_s);
  std::vector<int> silent;
  for (std::size_t i = 0; i < running_since_.size(); ++i)
    if (running_since_[i] && !progressed_[i] && now - *running_since_[i] >= floor) silent.push_back(static_cast<int>(i));
  if (silent.empty()) return std::nullopt;
  unwatched_said_ = true;
  std::string ranks;
  for (int rank : silent) ranks += (ranks.empty() ? "" : ", ") + std::to_string(rank);
  return fmt::format(
      "hang watch: {} {} run {} since init without any sign of progress (an optimizer step, a DDP forward or a "
      "torch.distributed collective), so the watch cannot judge {} yet: it judges a rank from its first progress "
      "on. A program with none of these (a C++ loop, a custom one) can report each step itself: "
      "ddplaunch_shim.step() in Python, ddplaunch::shim::step() in C++",
      silent.size() == 1 ? "rank" : "ranks", ranks + (silent.size() == 1 ? " has" : " have"),
      human_duration(tracker_.settings().suspect_floor_s), silent.size() == 1 ? "it" : "them");
}

std::string HangWatch::deadlines_text() const { return tracker_.limits().explained; }

}  // namespace ddplaunch
