// The period of a node's rank reports: 2 s while the job is small, stretched with the node
// count a little under the keep-alive pace, so that the master receives about its budget of
// frames a second at rest; and the master's readers follow it: the straggler watch and the hang
// watch are driven here at the period of 16384 nodes and still name the slow rank, the stopped
// rank, and nobody in a healthy job.
#include <gtest/gtest.h>

#include <variant>
#include <vector>

#include "policy/hang_watch.h"
#include "policy/rank_report_period.h"
#include "policy/straggler_watch.h"

namespace ddplaunch {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using TimePoint = PolicyClock::time_point;

const TimePoint kStart = TimePoint{} + std::chrono::hours(1);
const milliseconds kPeriodAt16384 = rank_report_period(16384);

TEST(RankReportPeriod, ASmallJobReportsEveryTwoSeconds) {
  for (std::size_t nodes : {0u, 1u, 64u, 400u, 900u})
    EXPECT_EQ(rank_report_period(nodes), milliseconds(2000)) << nodes << " nodes";
}

TEST(RankReportPeriod, ALargerJobReportsALittleMoreOftenThanItsKeepAlivePaceAndWithinTheBudget) {
  EXPECT_EQ(rank_report_period(4096), milliseconds(8960));
  EXPECT_EQ(kPeriodAt16384, milliseconds(35840));
  for (std::size_t nodes : {1024u, 4096u, 16384u, 65536u}) {
    const milliseconds pace{static_cast<long long>(nodes * 1000 / kRestBudgetPerS)};
    EXPECT_LT(rank_report_period(nodes), pace) << nodes << " nodes: the report comes before the heartbeat is due";
    EXPECT_GE(rank_report_period(nodes) * 8, pace * 7) << nodes << " nodes";
    const double per_s = static_cast<double>(nodes) * 1000.0 / static_cast<double>(rank_report_period(nodes).count());
    EXPECT_LE(per_s, static_cast<double>(kRestBudgetPerS) * 8 / 7 + 1) << nodes << " nodes";
  }
  EXPECT_EQ(rank_report_period(10000000), kRankReportLongestPeriod);
}

// A large job's reports are moved to whole seconds of the wall clock (at most half a second),
// so that they reach the master in batches; a short period's grid is an eighth of it.
TEST(RankReportPeriod, ReportsAreMovedToTheNearestInstantOfTheWallClocksGrid) {
  const milliseconds wall(1'700'000'000'250);  // a quarter past a second
  EXPECT_EQ(report_delay_on_grid(wall, milliseconds(35840), kPeriodAt16384), milliseconds(35750));
  EXPECT_EQ(report_delay_on_grid(wall, milliseconds(35200), kPeriodAt16384), milliseconds(34750));
  for (long offset = 0; offset < 1000; offset += 37) {
    const milliseconds now = wall + milliseconds(offset);
    const milliseconds delay = report_delay_on_grid(now, kPeriodAt16384, kPeriodAt16384);
    EXPECT_EQ((now + delay).count() % 1000, 0) << "on a whole second";
    EXPECT_LE(std::chrono::abs(delay - kPeriodAt16384), milliseconds(500));
  }
  const milliseconds small = report_delay_on_grid(wall, milliseconds(2000), milliseconds(2000));
  EXPECT_EQ((wall + small).count() % 250, 0) << "a 2 s period: a grid of 250 ms";
  EXPECT_LE(std::chrono::abs(small - milliseconds(2000)), milliseconds(125));
  EXPECT_EQ(report_delay_on_grid(wall, milliseconds(-5), milliseconds(2000)), milliseconds(0));
}

TEST(RankReportPeriod, TheStragglerWatchStretchesItsWindowToHoldTwoReports) {
  const StragglerSettings base;
  const StragglerSettings small = stretched_for(base, seconds(2));
  EXPECT_EQ(small.window, base.window);
  EXPECT_EQ(small.min_covered, base.min_covered);
  EXPECT_EQ(small.sustain, base.sustain);
  const StragglerSettings large = stretched_for(base, kPeriodAt16384);
  EXPECT_GE(large.window, kPeriodAt16384 * 2);
  EXPECT_GE(large.min_covered, kPeriodAt16384);
  EXPECT_GE(large.sustain, kPeriodAt16384);
}

// Every rank reports every `period` the wall time its steps covered and how much of it it
// waited; the master checks every second (its sweep).
struct StragglerJob {
  StragglerWatch watch;
  int world;
  milliseconds period;
  TimePoint now = kStart, next_report = kStart;
  std::vector<straggler::Event> events;
  int checks_without_shares = 0;  // after the first window: checks where some rank had no share

  StragglerJob(int ranks, milliseconds report_period) : world(ranks), period(report_period) {
    watch.on_generation(ranks, now, report_period);
    next_report = now + period;
  }

  template <typename Share>
  void run_for(seconds how_long, Share compute_share) {
    const TimePoint until = now + how_long;
    while (now < until) {
      now += seconds(1);
      if (now >= next_report) {
        next_report += period;
        for (int r = 0; r < world; ++r) {
          const double c = compute_share(r);
          watch.on_sample(r, period.count(), static_cast<long>(static_cast<double>(period.count()) * (1.0 - c)), now);
        }
      }
      for (auto& e : watch.check(now)) events.push_back(e);
      if (now - kStart > watch.settings().window)
        for (const auto& share : watch.compute_shares(now)) checks_without_shares += share ? 0 : 1;
    }
  }
};

TEST(RankReportPeriod, AtThePeriodOf16384NodesTheStragglerWatchStillSeesEveryRankAndNamesTheSlowOne) {
  StragglerJob job(4, kPeriodAt16384);
  job.run_for(seconds(300), [](int) { return 0.5; });
  EXPECT_TRUE(job.events.empty()) << "a balanced job names nobody";
  job.run_for(seconds(300), [](int r) { return r == 2 ? 0.9 : 0.2; });
  ASSERT_EQ(job.events.size(), 1u);
  EXPECT_EQ(std::get<straggler::Started>(job.events[0]).rank, 2);
  job.run_for(seconds(400), [](int) { return 0.5; });
  ASSERT_EQ(job.events.size(), 2u) << "its end is seen too";
  EXPECT_EQ(std::get<straggler::Ended>(job.events[1]).rank, 2);
  EXPECT_EQ(job.checks_without_shares, 0) << "every window held a report of every rank";
}

RankReport training(int rank, long steps, milliseconds since_last_step) {
  RankReport r;
  r.rank = rank;
  r.phase = RankPhase::Running;
  r.steps = steps;
  r.max_interval_ms = 500;
  r.progress_age_ms = since_last_step.count();
  return r;
}

// Four ranks step every 0.5 s; rank 3 stops after `stops_after` (never when zero). Reports come
// every `period`; the master checks every second. What the watch found, when it first found
// something, and whether a rank still stepping was ever counted quiet.
struct HangRun {
  std::vector<HangEvent> events;
  TimePoint first_event_at{};
  bool healthy_rank_was_quiet = false;
};
HangRun run_hang_watch(milliseconds period, seconds how_long, seconds stops_after) {
  HangWatch watch;
  watch.on_generation(Generation{1}, 4, kStart, period);
  HangRun run;
  const milliseconds step(500);
  TimePoint next_report = kStart + period;
  for (TimePoint now = kStart + seconds(1); now - kStart <= how_long; now += seconds(1)) {
    if (now >= next_report) {
      next_report += period;
      std::vector<RankReport> ranks;
      for (int r = 0; r < 4; ++r) {
        const auto ran = now - kStart;
        const bool stopped = r == 3 && stops_after.count() > 0 && ran > stops_after;
        const auto until = stopped ? PolicyClock::duration(stops_after) : ran;
        const long steps = static_cast<long>(until / step);
        ranks.push_back(training(r, steps, std::chrono::duration_cast<milliseconds>(ran - steps * step)));
      }
      watch.on_ranks_reported(Generation{1}, ranks, now);
    }
    for (HangEvent& e : watch.check(now)) {
      if (run.events.empty()) run.first_event_at = now;
      run.events.push_back(std::move(e));
    }
    for (int rank : watch.quiet_ranks()) run.healthy_rank_was_quiet |= rank != 3 || stops_after.count() == 0;
  }
  return run;
}

TEST(RankReportPeriod, AtThePeriodOf16384NodesAHealthyJobIsNeverSuspectNorQuiet) {
  const HangRun run = run_hang_watch(kPeriodAt16384, seconds(900), seconds(0));
  EXPECT_TRUE(run.events.empty());
  EXPECT_FALSE(run.healthy_rank_was_quiet) << "between two reports a rank is not counted silent";
}

TEST(RankReportPeriod, WithoutTheReportPeriodAHealthyRankWouldLookQuietBetweenReports) {
  // What on_reported prevents: the same reports with the period unknown to the watch.
  HangWatch watch;
  watch.on_generation(Generation{1}, 1, kStart);
  bool quiet = false;
  for (TimePoint now = kStart + seconds(1); now - kStart <= seconds(300); now += seconds(1)) {
    if ((now - kStart) % kPeriodAt16384 < seconds(1)) {
      const long steps = static_cast<long>((now - kStart) / milliseconds(500));
      watch.on_ranks_reported(Generation{1}, {training(0, steps, milliseconds(100))}, now);
    }
    watch.check(now);
    quiet |= !watch.quiet_ranks().empty();
  }
  EXPECT_TRUE(quiet);
}

// The watch dates a step by the node's own clock (the report's age) and counts the silence
// from there to the last report; past it only once the next report is overdue. A stopped rank
// is therefore found at its limit, one period later at most.
TEST(RankReportPeriod, AtThePeriodOf16384NodesAStoppedRankIsSuspectAfterTheFloorWithinOnePeriod) {
  const HangRun run = run_hang_watch(kPeriodAt16384, seconds(600), seconds(60));
  ASSERT_FALSE(run.events.empty());
  EXPECT_EQ(run.events[0].level, HangEvent::Level::Suspect);
  EXPECT_EQ(run.events[0].ranks, std::vector<int>{3});
  EXPECT_FALSE(run.healthy_rank_was_quiet) << "only the stopped rank is quiet";
  const auto silent_at_suspect = run.first_event_at - (kStart + seconds(60));
  const double floor = HangSettings{}.suspect_floor_s;
  EXPECT_GE(silent_at_suspect, seconds(static_cast<long>(floor)));
  EXPECT_LE(silent_at_suspect, seconds(static_cast<long>(floor)) + kPeriodAt16384 + seconds(1));
}

TEST(RankReportPeriod, AtTwoSecondsAStoppedRankIsSuspectAtTheFloorAsBefore) {
  const HangRun run = run_hang_watch(kRankReportBasePeriod, seconds(300), seconds(60));
  ASSERT_FALSE(run.events.empty());
  EXPECT_EQ(run.events[0].ranks, std::vector<int>{3});
  const auto silent_at_suspect = run.first_event_at - (kStart + seconds(60));
  const double floor = HangSettings{}.suspect_floor_s;
  EXPECT_GE(silent_at_suspect, seconds(static_cast<long>(floor)));
  EXPECT_LE(silent_at_suspect, seconds(static_cast<long>(floor)) + seconds(5));
}

}  // namespace
}  // namespace ddplaunch
