// StragglerWatch: the rank every other rank waits for is named once when it starts and once
// when it ends; balanced jobs (noisy, or communication-bound) and pauses of the whole job
// name nobody.
#include <gtest/gtest.h>

#include <variant>
#include <vector>

#include "policy/straggler_watch.h"

namespace ddplaunch {
namespace {

using std::chrono::seconds;
using TimePoint = StragglerWatch::TimePoint;

const TimePoint kStart = TimePoint{} + std::chrono::hours(1);

// Deterministic noise in [-1, 1): a linear congruential sequence.
struct Noise {
  unsigned state = 12345;
  double next() {
    state = state * 1103515245u + 12345u;
    return static_cast<double>((state >> 8) % 20000) / 10000.0 - 1.0;
  }
};

// Every rank reports every 2 s: 2000 ms of wall time, of which `wait` is waiting.
struct Job {
  StragglerWatch watch;
  int world;
  TimePoint now = kStart;
  std::vector<straggler::Event> events;

  explicit Job(int ranks) : world(ranks) { watch.on_generation(ranks, now); }

  // `compute_share(rank)`: the share of the 2 s the rank computed.
  template <typename Share>
  void run_for(seconds how_long, Share compute_share) {
    const TimePoint until = now + how_long;
    while (now < until) {
      now += seconds(2);
      for (int r = 0; r < world; ++r) {
        const double c = std::clamp(compute_share(r), 0.0, 1.0);
        watch.on_sample(r, 2000, static_cast<long>(2000 * (1.0 - c)), now);
      }
      for (auto& e : watch.check(now)) events.push_back(e);
    }
  }
};

TEST(StragglerWatch, ARankThatComputesLongerWhileTheOthersWaitIsNamedOnceAndItsEndOnce) {
  Job job(4);
  job.run_for(seconds(10), [](int) { return 0.5; });  // balanced
  EXPECT_TRUE(job.events.empty());
  // Rank 2 is starved: it computes 90 % of the time, the others 20 % (they wait for it).
  job.run_for(seconds(40), [](int r) { return r == 2 ? 0.9 : 0.2; });
  ASSERT_EQ(job.events.size(), 1u);
  const auto* started = std::get_if<straggler::Started>(&job.events[0]);
  ASSERT_NE(started, nullptr);
  EXPECT_EQ(started->rank, 2);
  // Named once the rule held for the sustain: the window still holds balanced reports then.
  EXPECT_GT(started->compute_ratio, 2.0);
  EXPECT_GT(started->others_wait_share, 0.6);
  EXPECT_EQ(job.watch.straggler(), 2);
  const auto shares = job.watch.compute_shares(job.now);  // by now the window is all slow
  ASSERT_TRUE(shares[2] && shares[0]);
  EXPECT_NEAR(*shares[2], 0.9, 0.001);  // wait is whole milliseconds
  EXPECT_NEAR(*shares[0], 0.2, 0.001);
  // Balanced again: its end is said once, with how long it lasted.
  job.run_for(seconds(60), [](int) { return 0.5; });
  ASSERT_EQ(job.events.size(), 2u);
  const auto* ended = std::get_if<straggler::Ended>(&job.events[1]);
  ASSERT_NE(ended, nullptr);
  EXPECT_EQ(ended->rank, 2);
  EXPECT_GT(ended->lasted, seconds(20));
  EXPECT_FALSE(job.watch.straggler());
}

TEST(StragglerWatch, ItIsNamedOnlyOnceItHeldForTheSustainNotAtItsFirstSlowWindow) {
  Job job(2);
  job.run_for(seconds(8), [](int r) { return r == 1 ? 0.9 : 0.1; });
  EXPECT_TRUE(job.events.empty());  // the windows cover too little yet, then the sustain runs
  job.run_for(seconds(20), [](int r) { return r == 1 ? 0.9 : 0.1; });
  ASSERT_EQ(job.events.size(), 1u);
  EXPECT_EQ(std::get<straggler::Started>(job.events[0]).rank, 1);
}

TEST(StragglerWatch, ANoisyBalancedJobNamesNobody) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    Job job(4);
    Noise noise{seed};
    // Each rank computes 40 % ± 10 % of each report (a noisy, shared machine).
    job.run_for(seconds(300), [&](int) { return 0.4 + 0.1 * noise.next(); });
    EXPECT_TRUE(job.events.empty()) << "seed " << seed;
  }
}

TEST(StragglerWatch, ACommunicationBoundBalancedJobNamesNobodyThoughEveryoneWaits) {
  Job job(8);
  Noise noise;
  // 5 % ± 4 %: the ratios between ranks are large, the differences of wall time are not.
  job.run_for(seconds(300), [&](int) { return 0.05 + 0.04 * noise.next(); });
  EXPECT_TRUE(job.events.empty());
}

TEST(StragglerWatch, APauseOfTheWholeJobIsForgottenNotNamed) {
  Job job(4);
  // Rank 0 writes a checkpoint for 30 s while the others wait in a barrier; the master sees
  // the section open and forgets the window at each report.
  const TimePoint until = job.now + seconds(30);
  while (job.now < until) {
    job.now += seconds(2);
    for (int r = 0; r < 4; ++r) job.watch.on_sample(r, 2000, r == 0 ? 0 : 1900, job.now);
    job.watch.on_pause();
    for (auto& e : job.watch.check(job.now)) job.events.push_back(e);
  }
  EXPECT_TRUE(job.events.empty());
}

TEST(StragglerWatch, ANewGenerationEndsTheNamedStragglerAndStartsOver) {
  Job job(2);
  job.run_for(seconds(30), [](int r) { return r == 0 ? 0.8 : 0.1; });
  ASSERT_EQ(job.events.size(), 1u);
  const auto ends = job.watch.on_generation(2, job.now);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(std::get<straggler::Ended>(ends[0]).rank, 0);
  EXPECT_FALSE(job.watch.straggler());
  for (const auto& share : job.watch.compute_shares(job.now)) EXPECT_FALSE(share);
}

TEST(StragglerWatch, NonsenseSamplesAreIgnored) {
  StragglerWatch watch;
  watch.on_generation(2, kStart);
  watch.on_sample(-1, 2000, 0, kStart);
  watch.on_sample(5, 2000, 0, kStart);
  watch.on_sample(0, 2000, 3000, kStart);  // waited longer than it ran
  watch.on_sample(0, -2000, 0, kStart);
  watch.on_sample(1, 0, 0, kStart);
  for (const auto& share : watch.compute_shares(kStart)) EXPECT_FALSE(share);
  EXPECT_TRUE(watch.check(kStart + seconds(60)).empty());
}

TEST(StragglerWatch, TheSharesCoverOnlyTheWindow) {
  Job job(2);
  job.run_for(seconds(60), [](int) { return 0.25; });
  job.run_for(seconds(40), [](int) { return 0.75; });
  const auto shares = job.watch.compute_shares(job.now);
  ASSERT_TRUE(shares[0] && shares[1]);
  EXPECT_NEAR(*shares[0], 0.75, 1e-9);  // the 20 s window holds only the later samples
}

}  // namespace
}  // namespace ddplaunch
