// StragglerWatch: see straggler_watch.h.
#include "policy/straggler_watch.h"

#include <algorithm>

#include "ddplaunch/base/small_math.h"

namespace ddplaunch {

namespace {

struct Window {
  long span_ms = 0;
  long wait_ms = 0;
};

}  // namespace

StragglerSettings stretched_for(const StragglerSettings& base, PolicyClock::duration report_period) {
  StragglerSettings s = base;
  s.window = std::max(base.window, report_period * 5 / 2);
  s.min_covered = std::max(base.min_covered, report_period);
  s.sustain = std::max(base.sustain, report_period);
  return s;
}

StragglerWatch::StragglerWatch(StragglerSettings settings)
    : base_(settings), settings_(settings), starting_(settings.sustain), ending_(settings.sustain) {}

std::vector<straggler::Event> StragglerWatch::on_generation(int world, TimePoint now,
                                                            PolicyClock::duration report_period) {
  settings_ = stretched_for(base_, report_period);
  starting_ = SustainedCondition(settings_.sustain);
  ending_ = SustainedCondition(settings_.sustain);
  std::vector<straggler::Event> events;
  if (named_) events.push_back(straggler::Ended{*named_, now - named_at_});
  samples_.assign(static_cast<std::size_t>(std::max(world, 0)), {});
  named_.reset();
  candidate_.reset();
  starting_.observe(false, now);
  ending_.observe(false, now);
  return events;
}

void StragglerWatch::on_sample(int rank, long span_ms, long wait_ms, TimePoint now) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= samples_.size()) return;
  if (span_ms <= 0 || wait_ms < 0 || wait_ms > span_ms) return;
  samples_[static_cast<std::size_t>(rank)].push_back({now, span_ms, wait_ms});
}

void StragglerWatch::on_pause() {
  for (auto& rank : samples_) rank.clear();
}

void StragglerWatch::forget_older_than(TimePoint cutoff) {
  for (auto& rank : samples_) {
    while (!rank.empty() && rank.front().at < cutoff) rank.pop_front();
  }
}

std::vector<std::optional<double>> StragglerWatch::compute_shares(TimePoint now) const {
  const long min_covered_ms = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.min_covered).count();
  std::vector<std::optional<double>> shares(samples_.size());
  for (std::size_t r = 0; r < samples_.size(); ++r) {
    Window w;
    for (const auto& s : samples_[r]) {
      if (s.at < now - settings_.window) continue;
      w.span_ms += s.span_ms;
      w.wait_ms += s.wait_ms;
    }
    if (w.span_ms >= min_covered_ms) shares[r] = 1.0 - static_cast<double>(w.wait_ms) / static_cast<double>(w.span_ms);
  }
  return shares;
}

std::optional<StragglerWatch::Verdict> StragglerWatch::judge(TimePoint now) const {
  const auto shares = compute_shares(now);
  int slowest = -1;
  for (std::size_t r = 0; r < shares.size(); ++r) {
    if (shares[r] && (slowest < 0 || *shares[r] > *shares[static_cast<std::size_t>(slowest)])) {
      slowest = static_cast<int>(r);
    }
  }
  if (slowest < 0) return std::nullopt;
  std::vector<double> others;
  for (std::size_t r = 0; r < shares.size(); ++r) {
    if (shares[r] && static_cast<int>(r) != slowest) others.push_back(*shares[r]);
  }
  if (others.empty()) return std::nullopt;  // nobody to wait for it
  const double its = *shares[static_cast<std::size_t>(slowest)];
  const double median = median_of(others);
  double others_wait = 0;
  for (double c : others) others_wait += 1.0 - c;
  others_wait /= static_cast<double>(others.size());
  // A share near zero (ranks that only wait) would make any ratio huge: the gap bound decides then.
  const double ratio = its / std::max(median, 0.01);
  if (ratio < settings_.compute_ratio || its - median < settings_.min_gap ||
      others_wait < settings_.others_wait_share) {
    return std::nullopt;
  }
  return Verdict{slowest, ratio, others_wait};
}

std::vector<straggler::Event> StragglerWatch::check(TimePoint now) {
  forget_older_than(now - settings_.window);
  const auto verdict = judge(now);
  std::vector<straggler::Event> events;
  if (!named_) {
    if (!verdict || candidate_ != verdict->rank) starting_.observe(false, now);
    candidate_ = verdict ? std::optional<int>(verdict->rank) : std::nullopt;
    if (verdict && starting_.observe(true, now)) {
      named_ = verdict->rank;
      named_at_ = now;
      ending_.observe(false, now);
      events.push_back(straggler::Started{verdict->rank, verdict->compute_ratio, verdict->others_wait_share});
    }
    return events;
  }
  const bool still = verdict && verdict->rank == *named_;
  if (ending_.observe(!still, now)) {
    events.push_back(straggler::Ended{*named_, now - named_at_});
    named_.reset();
    candidate_.reset();
    starting_.observe(false, now);
    ending_.observe(false, now);
  }
  return events;
}

}  // namespace ddplaunch
