// StragglerReports: see straggler_reports.h.
#include "master/straggler_reports.h"

#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "ddplaunch/base/overloaded.h"
#include "policy/init_tracker.h"  // human_duration
#include "policy/straggler_explanation.h"

namespace ddplaunch {

namespace {
bool holds_the_job(const RankReport& r) { return r.in_debugger() || r.state == "paused" || !r.section.empty(); }
double seconds_of(PolicyClock::duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

StragglerReports::StragglerReports(MasterTimeline& timeline, StragglerSettings settings)
    : timeline_(timeline), watch_(settings) {}

void StragglerReports::start_generation(Generation generation, int world, PolicyClock::duration report_period,
                                        PolicyClock::time_point now) {
  for (const auto& e : watch_.on_generation(world, now, report_period)) carry_out(e, now);
  generation_ = generation;
  world_ = world;
  holding_.clear();
  holding_count_ = 0;
  counter_at_.clear();
  cpu_cores_.clear();
}

void StragglerReports::on_ranks_reported(int node_rank, const std::string& host, Generation generation,
                                         const std::vector<RankReport>& ranks, PolicyClock::time_point now,
                                         const NodeSignals& signals) {
  if (generation != generation_) return;  // a late report of an earlier generation
  node_signals_[node_rank] = signals;
  for (const auto& r : ranks) {
    if (r.rank < 0 || r.rank >= world_) continue;
    Place& place = places_[r.rank];
    if (place.node != node_rank || place.host != host) place = Place{node_rank, host};  // no copy per report
    if (r.cpu_millicores >= 0) cpu_cores_[r.rank] = static_cast<double>(r.cpu_millicores) / 1000.0;
    else cpu_cores_.erase(r.rank);
    const bool holds = holds_the_job(r);
    if (std::exchange(holding_[r.rank], holds) != holds) holding_count_ += holds ? 1 : -1;
    if (r.span_ms > 0 && r.wait_ms >= 0) watch_.on_sample(r.rank, r.span_ms, r.wait_ms, now);
  }
  // The others wait for a person or a planned pause then, not for a slow rank.
  if (holding_count_ > 0) watch_.on_pause();
}

void StragglerReports::check(PolicyClock::time_point now) {
  for (const auto& e : watch_.check(now)) carry_out(e, now);
  // The counters are looked at every kCounterEvery, not at every sweep: one pass over every
  // rank a second had been a tenth of the master's time at rest with 16384 ranks.
  if (now < next_counters_at_) return;
  next_counters_at_ = now + kCounterEvery;
  const auto shares = watch_.compute_shares(now);
  for (std::size_t rank = 0; rank < shares.size(); ++rank) {
    const int r = static_cast<int>(rank);
    if (!shares[rank] || !places_.count(r)) continue;
    auto [last, first] = counter_at_.try_emplace(r, Counter{now, *shares[rank]});
    if (!first) {
      const auto since = now - last->second.at;
      const bool moved = std::abs(*shares[rank] - last->second.share) >= kCounterStep;
      if (!moved && since < kCounterKeyframe) continue;
      last->second = Counter{now, *shares[rank]};
    }
    timeline_.record_counter(places_.at(r).node, r, "compute share", *shares[rank]);
  }
}

std::map<int, double> StragglerReports::compute_shares(PolicyClock::time_point now) const {
  std::map<int, double> out;
  const auto shares = watch_.compute_shares(now);
  for (std::size_t rank = 0; rank < shares.size(); ++rank) {
    if (shares[rank]) out[static_cast<int>(rank)] = *shares[rank];
  }
  return out;
}

std::map<int, double> StragglerReports::cpu_cores() const { return cpu_cores_; }

std::vector<std::string> StragglerReports::signals_of(int rank) const {
  auto place = places_.find(rank);
  if (place == places_.end()) return {};
  const int node = place->second.node;
  std::vector<NodeSignals> others;
  for (const auto& [other, signals] : node_signals_)
    if (other != node) others.push_back(signals);
  auto its = node_signals_.find(node);
  auto cores = cpu_cores_.find(rank);
  return straggler_signals(rank, cores == cpu_cores_.end() ? std::nullopt : std::optional<double>(cores->second),
                           its == node_signals_.end() ? NodeSignals{} : its->second, others);
}

std::vector<std::string> StragglerReports::explaining_signals() const {
  const auto rank = watch_.straggler();
  return rank ? signals_of(*rank) : std::vector<std::string>{};
}

std::string StragglerReports::where(int rank) const {
  auto place = places_.find(rank);
  if (place == places_.end()) return fmt::format("rank {}", rank);
  return fmt::format("rank {} (node {}, host {})", rank, place->second.node, place->second.host);
}

void StragglerReports::carry_out(const straggler::Event& event, PolicyClock::time_point now) {
  std::visit(Overloaded{
      [&](const straggler::Started& started) {
        const Place place = places_.count(started.rank) ? places_.at(started.rank) : Place{};
        const std::string signals = signals_text(place.node, signals_of(started.rank));
        const std::string text = fmt::format(
            "{} computes {:.1f}x the median of the other ranks; the other {} rank(s) wait {:.0f} % of each step for "
            "it{}",
            where(started.rank), started.compute_ratio, std::max(world_ - 1, 1), started.others_wait_share * 100.0,
            signals.empty() ? "" : " — " + signals);
        spdlog::warn("straggler: {}. The job runs at its pace: look at host {} (other processes on its cores, CPU "
                     "throttling or steal, memory or I/O pressure, a slower disk for its data); `ddplaunch status` "
                     "shows every rank's compute share",
                     text, place.host.empty() ? "?" : place.host);
        timeline_.record_instant(place.node, "straggler", "straggler", text, started.rank);
        if (!place.host.empty()) ++by_host_[place.host];
        if (episodes_.size() == kMaxEpisodes) {
          episodes_.erase(episodes_.begin());
          ++episodes_dropped_;
        }
        episodes_.push_back(
            Episode{started.rank, place, started.compute_ratio, started.others_wait_share, now, {}, signals});
      },
      [&](const straggler::Ended& ended) {
        const std::string text = fmt::format("{} no longer holds the job back (it did for {})", where(ended.rank),
                                             human_duration(seconds_of(ended.lasted)));
        spdlog::info("straggler: {}", text);
        const int node = places_.count(ended.rank) ? places_.at(ended.rank).node : timeline::kJobLane;
        timeline_.record_instant(node, "straggler ends", "straggler", text, ended.rank);
        for (auto it = episodes_.rbegin(); it != episodes_.rend(); ++it) {
          if (it->rank == ended.rank && !it->lasted) {
            it->lasted = ended.lasted;
            break;
          }
        }
      },
  }, event);
}

std::vector<std::string> StragglerReports::summary_lines(PolicyClock::time_point now) const {
  std::vector<std::string> lines;
  if (episodes_dropped_ > 0) lines.push_back(fmt::format("({} earlier straggler episode(s) not listed)", episodes_dropped_));
  for (const auto& e : episodes_) {
    const double lasted = seconds_of(e.lasted ? *e.lasted : now - e.began);
    lines.push_back(fmt::format("straggler: rank {} (node {}, host {}) held the job back for {}{}: {:.1f}x the "
                                "others' compute, they waited {:.0f} % of each step{}",
                                e.rank, e.place.node, e.place.host.empty() ? "?" : e.place.host, human_duration(lasted),
                                e.lasted ? "" : " (until the end)", e.compute_ratio, e.others_wait_share * 100.0,
                                e.signals.empty() ? "" : " — " + e.signals));
  }
  return lines;
}

std::optional<StragglerReports::Holding> StragglerReports::holding_back(PolicyClock::time_point now) const {
  if (!watch_.straggler() || episodes_.empty()) return std::nullopt;
  const Episode& e = episodes_.back();
  if (e.lasted || e.rank != *watch_.straggler()) return std::nullopt;
  return Holding{e.rank, e.place.node, seconds_of(now - e.began),
                 fmt::format("it computes {:.1f}x the median of the other ranks; they wait {:.0f} % of each step",
                             e.compute_ratio, e.others_wait_share * 100.0)};
}

std::map<std::string, int> StragglerReports::episodes_by_host() const { return by_host_; }

}  // namespace ddplaunch
