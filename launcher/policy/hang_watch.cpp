// HangWatch: rank reports → HangTracker events (see hang_watch.h).
#include "policy/hang_watch.h"

#include <fmt/format.h>

namespace ddplaunch {

void HangWatch::on_generation(long generation, int world, TimePoint now) {
  generation_ = generation;
  tracker_.reset(world, now);
  sections_.assign(static_cast<std::size_t>(std::max(world, 0)), std::string());
}

void HangWatch::on_ranks_reported(long generation, const std::vector<RankReport>& ranks, TimePoint now) {
  if (generation != generation_) return;  // a late report about an older generation
  for (const RankReport& r : ranks) {
    if (r.rank < 0 || r.rank >= static_cast<int>(sections_.size())) continue;
    if (r.phase == RankPhase::Exited) {
      tracker_.on_exit(r.rank);
      continue;
    }
    if (r.progress_age_ms < 0) continue;  // no step or section yet: the init rules apply
    // The node measured when the progress happened; the report only carries it here.
    const TimePoint at = now - std::chrono::milliseconds(r.progress_age_ms);
    if (r.steps > 0) tracker_.on_step(r.rank, r.steps, r.max_interval_ms, at);
    std::string& open = sections_[static_cast<std::size_t>(r.rank)];
    if (r.section == open) continue;
    if (!open.empty()) tracker_.on_section(r.rank, false, open, at);
    if (!r.section.empty()) tracker_.on_section(r.rank, true, r.section, at);
    open = r.section;
  }
}

std::string HangWatch::deadlines_text() const { return tracker_.limits().explained; }

}  // namespace ddplaunch
