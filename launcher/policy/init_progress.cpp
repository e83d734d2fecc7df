// InitProgress: see init_progress.h.
#include "policy/init_progress.h"

#include <algorithm>

#include <fmt/format.h>

#include "ddplaunch/rendezvous/generation_format.h"

namespace ddplaunch {

void InitProgress::begin(PolicyClock::time_point now) {
  init_done_announced_ = false;
  generation_started_ = now;
  last_wait_report_ = now;
}

std::optional<std::string> InitProgress::announce_init_done(const InitTracker& tracker, Generation generation,
                                                            PolicyClock::time_point now) {
  if (init_done_announced_) return std::nullopt;
  const auto& ranks = tracker.ranks();
  const bool all_initialised = !ranks.empty() && std::all_of(ranks.begin(), ranks.end(), [](const TrackedRank& t) {
    return t.last.phase == RankPhase::Running && t.last.init_entries > 0;
  });
  if (!all_initialised) return std::nullopt;
  init_done_announced_ = true;
  const double seconds = std::chrono::duration<double>(now - generation_started_).count();
  // The history learns what the init deadline measures: from the last rank entering init to
  // every rank running, never the setup (data loading, imports) before it.
  const auto init_began = tracker.last_entered_init().value_or(now);
  init_seconds_ = std::chrono::duration<double>(now - init_began).count();
  return fmt::format("generation {}: all {} ranks finished init (init_ok) {:.2f} s after the start "
                     "({:.2f} s of init after the last rank entered it)",
                     generation, ranks.size(), seconds, *init_seconds_);
}

std::optional<std::string> InitProgress::wait_report(const InitTracker& tracker, PolicyClock::time_point now,
                                                     std::chrono::milliseconds first, std::chrono::milliseconds every) {
  auto waiting = tracker.waiting();
  if (!waiting) return std::nullopt;
  if (now - waiting->since < first || now - last_wait_report_ < every) return std::nullopt;
  last_wait_report_ = now;
  const TrackedRank& behind = tracker.ranks()[static_cast<std::size_t>(waiting->behind.front())];
  std::string where = behind.last.phase == RankPhase::Setup ? "still in setup" : "not in init yet";
  return fmt::format("{} rank(s) wait in init for {}, {} after {} (not a failure: the init deadline starts "
                     "when every rank has entered init)",
                     waiting->waiting, name_ranks(waiting->behind, tracker), where,
                     human_duration(std::chrono::duration<double>(now - behind.since).count()));
}

}  // namespace ddplaunch
