// HangTracker: learnt deadlines from progress reports, two levels, sections; HangWatch (rank
// reports → learnt deadlines), the hang action and JobPolicy's hang decision. Pure: the tests
// drive the clock.
#include <gtest/gtest.h>

#include "policy/hang_action.h"
#include "policy/hang_tracker.h"
#include "policy/hang_watch.h"
#include "policy/job_policy.h"
#include "stack_samples.h"

namespace {

using namespace ddplaunch;
using namespace std::chrono_literals;
const PolicyClock::time_point t0 = PolicyClock::time_point{} + 1000s;

// Ranks 0..world-1 step every `interval` up to `until`, reporting once a second as the shim does.
void train(HangTracker& h, int world, std::chrono::milliseconds interval, PolicyClock::duration until,
           PolicyClock::time_point start = t0, long first_step = 1) {
  long step = first_step;
  for (auto t = start; t - start <= until; t += std::max<PolicyClock::duration>(interval, 1s)) {
    for (int r = 0; r < world; ++r) h.on_step(r, step, static_cast<long>(interval.count()), t);
    step += std::max<long>(1, 1000 / std::max<long>(1, interval.count()));
  }
}

TEST(HangTracker, HealthyTrainingIsNeverSuspect) {
  HangTracker h;
  h.reset(4, t0);
  train(h, 4, 400ms, 10min);
  EXPECT_TRUE(h.check(t0 + 10min + 1s).empty());
  EXPECT_DOUBLE_EQ(h.learnt_interval_s(), 0.4);
}

TEST(HangTracker, ARankThatStopsIsSuspectAfterTheFloorThenHungAfterTheMinimumOnceEach) {
  HangTracker h;
  h.reset(2, t0);
  train(h, 2, 200ms, 30s);
  h.on_step(0, 100000, 200, t0 + 5min);  // rank 0 goes on, rank 1 stopped at t0 + 30 s
  EXPECT_TRUE(h.check(t0 + 30s + 59s).empty());
  auto suspect = h.check(t0 + 30s + 61s);
  ASSERT_EQ(suspect.size(), 1u);
  EXPECT_EQ(suspect[0].level, HangEvent::Level::Suspect);
  EXPECT_EQ(suspect[0].ranks, std::vector<int>{1});
  EXPECT_NE(suspect[0].text.find("suspect: rank 1 made no progress for"), std::string::npos) << suspect[0].text;
  EXPECT_NE(suspect[0].text.find("only reported"), std::string::npos) << suspect[0].text;
  EXPECT_TRUE(h.check(t0 + 30s + 62s).empty()) << "said once per episode";
  auto hang = h.check(t0 + 30s + 1801s);
  ASSERT_EQ(hang.size(), 2u);  // by then rank 0 (silent since t0 + 5 min) is suspect too
  auto hung = std::find_if(hang.begin(), hang.end(), [](const HangEvent& e) { return e.level == HangEvent::Level::Hang; });
  ASSERT_NE(hung, hang.end());
  EXPECT_EQ(hung->ranks, std::vector<int>{1});
  EXPECT_NE(hung->text.find("hang: rank 1"), std::string::npos) << hung->text;
}

// Rank 1 stops first; ranks 0 and 2 block in the collective it never joins, and rank 0's last
// report came a second before the others': rank 0 crosses each limit first. The event names
// rank 0, and its quiet ranks (without progress for half the suspect limit) name all three, so
// the stacks can single out rank 1; a rank still stepping is not among them.
TEST(HangTracker, ACheckNamesEveryQuietRankNotOnlyTheFirstPastTheLimit) {
  HangTracker h;
  h.reset(4, t0);
  train(h, 4, 200ms, 30s);
  for (int r : {1, 2}) h.on_step(r, 1000, 200, t0 + 32s);
  for (int s = 0; s < 60; ++s) h.on_step(3, 2000 + s, 200, t0 + 31s + std::chrono::seconds(s));
  auto suspect = h.check(t0 + 30s + 61s);
  ASSERT_EQ(suspect.size(), 1u);
  EXPECT_EQ(suspect[0].ranks, std::vector<int>{0});
  EXPECT_EQ(h.quiet_ranks(), (std::vector<int>{0, 1, 2}));
  auto hang = h.check(t0 + 30s + 1801s);
  auto hung = std::find_if(hang.begin(), hang.end(), [](const HangEvent& e) { return e.level == HangEvent::Level::Hang; });
  ASSERT_NE(hung, hang.end());
  EXPECT_EQ(hung->ranks, std::vector<int>{0});
  EXPECT_EQ(h.quiet_ranks(), (std::vector<int>{0, 1, 2, 3}));  // by then rank 3 stopped too
}

TEST(HangTracker, ConsistentlySlowStepsRaiseTheLearntDeadlinesInsteadOfBeingSuspect) {
  HangTracker h;
  h.reset(2, t0);
  train(h, 2, 90s, 30min);  // a 90 s step: slow, healthy
  EXPECT_TRUE(h.check(t0 + 30min + 89s).empty());
  auto l = h.limits();
  EXPECT_DOUBLE_EQ(l.suspect_s, 450);   // 5 x 90 s
  EXPECT_DOUBLE_EQ(l.hang_s, 1800);     // 20 x 90 s = the minimum, 30 min
  EXPECT_NE(l.explained.find("largest step 90.00 s seen in this run"), std::string::npos) << l.explained;
}

TEST(HangTracker, WarmUpStepsTeachNothing) {
  HangTracker h;
  h.reset(1, t0);
  h.on_step(0, 1, 0, t0);
  h.on_step(0, 2, 120000, t0 + 2min);  // a 2 min first step (compilation)
  h.on_step(0, 50, 300, t0 + 2min + 15s);
  EXPECT_DOUBLE_EQ(h.learnt_interval_s(), 0.3);
}

TEST(HangTracker, ACheckpointSectionHasItsOwnDeadlinesAndLongerThanEverIsOnlyReported) {
  HangTracker h;
  h.reset(2, t0);
  train(h, 2, 500ms, 1min);
  // A first 3 min checkpoint on rank 0, the other rank waiting in its next step's collective.
  h.on_section(0, true, "checkpoint", t0 + 1min);
  // Rank 1 waits for it in a collective: judged by the section's limits too (5 min floor).
  EXPECT_TRUE(h.check(t0 + 1min + 3min).empty());
  auto during = h.check(t0 + 1min + 5min + 1s);
  ASSERT_EQ(during.size(), 2u);  // rank 0 in the section, rank 1 waiting: both suspect, neither hung
  for (const auto& e : during) EXPECT_EQ(e.level, HangEvent::Level::Suspect);
  h.on_section(0, false, "checkpoint", t0 + 7min);
  EXPECT_DOUBLE_EQ(h.longest_sections().at("checkpoint"), 360);
  // Next time the checkpoint takes 40 min: longer than ever, past its suspect limit (30 min
  // = 5 x 6 min) — reported, not hung (its hang limit is 2 h = 20 x 6 min).
  train(h, 2, 500ms, 1min, t0 + 7min, 1000);
  h.on_section(0, true, "checkpoint", t0 + 8min);
  h.on_section(1, true, "checkpoint", t0 + 8min);
  EXPECT_TRUE(h.check(t0 + 8min + 29min).empty());
  auto long_one = h.check(t0 + 8min + 30min + 1s);
  ASSERT_EQ(long_one.size(), 1u);
  EXPECT_EQ(long_one[0].level, HangEvent::Level::Suspect);
  EXPECT_EQ(long_one[0].section, "checkpoint");
  EXPECT_EQ(long_one[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_NE(long_one[0].text.find("inside section 'checkpoint'"), std::string::npos) << long_one[0].text;
  EXPECT_NE(long_one[0].text.find("longest 'checkpoint' so far 6 min"), std::string::npos) << long_one[0].text;
  EXPECT_TRUE(h.check(t0 + 8min + 119min).empty());
  auto hung = h.check(t0 + 8min + 121min);  // the section's hang deadline, 2 h
  ASSERT_EQ(hung.size(), 1u);
  EXPECT_EQ(hung[0].level, HangEvent::Level::Hang);
}

TEST(HangTracker, RanksThatWaitedForASectionStartTheirClocksWhenItEnds) {
  HangTracker h;
  h.reset(2, t0);
  train(h, 2, 500ms, 1min);
  h.on_section(0, true, "checkpoint", t0 + 1min);
  h.on_section(0, false, "checkpoint", t0 + 1min + 70s);  // rank 1 waited 70 s (> the floor) in a collective
  // Before rank 1's next step is reported, the first checks after the section find nothing:
  // rank 1's silence counts from the section's end, not from before it began.
  EXPECT_TRUE(h.check(t0 + 1min + 71s).empty());
  auto later = h.check(t0 + 1min + 70s + 61s);  // but it is judged again from there
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].ranks, (std::vector<int>{0, 1}));
}

TEST(HangTracker, HistorySeedsTheFirstDeadlinesAndSaysSo) {
  HangSettings s;
  s.seeded_interval_s = 40;
  s.seeded_from = "history: p99 of 12 runs";
  HangTracker h(s);
  h.reset(1, t0);
  auto l = h.limits();
  EXPECT_DOUBLE_EQ(l.suspect_s, 200);
  EXPECT_DOUBLE_EQ(l.hang_s, 1800);
  EXPECT_NE(l.explained.find("largest step 40.00 s, history: p99 of 12 runs"), std::string::npos) << l.explained;
}

TEST(HangTracker, RanksNotYetTrainingAndExitedRanksAreNotJudged) {
  HangTracker h;
  h.reset(3, t0);
  h.on_step(0, 10, 100, t0 + 1s);
  h.on_step(1, 10, 100, t0 + 1s);
  h.on_exit(1);
  // Rank 2 never stepped (still in setup/init: those have their own rules); rank 1 exited.
  auto found = h.check(t0 + 2h);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].ranks, std::vector<int>{0});
}

}  // namespace

// One forged step report of a week (604,800,000 ms) must not set the hang deadline to
// 3360 h: an interval is believed only up to the time the generation has run.
TEST(HangTracker, AForgedStepIntervalIsBoundedByTheTimeTheGenerationHasRun) {
  HangTracker h;
  h.reset(2, t0);
  train(h, 2, 500ms, 20s);
  h.on_step(1, 1000, 604'800'000, t0 + 30s);
  EXPECT_LE(h.learnt_interval_s(), 30.0);
  EXPECT_GE(h.learnt_interval_s(), 0.5);
  // A negative interval (corrupt) teaches nothing either.
  h.on_step(0, 1000, -5, t0 + 31s);
  EXPECT_GE(h.learnt_interval_s(), 0.5);
  // So the hang deadline stays within the minimum and 20 x that bound.
  EXPECT_LE(h.limits().hang_s, std::max(30.0 * 60, 20 * 30.0));
}

// A person holds a rank in a debugger: nobody is judged while held, however long; released,
// every clock starts again, so the deadlines count from the release.
TEST(HangTracker, NobodyIsJudgedWhileHeldAndClocksRestartAtTheRelease) {
  HangTracker h;
  h.reset(2, t0);
  train(h, 2, 200ms, 30s);
  h.hold(true, t0 + 31s);
  EXPECT_TRUE(h.held());
  EXPECT_TRUE(h.check(t0 + 31s + 3h).empty());
  h.hold(false, t0 + 31s + 3h);
  EXPECT_TRUE(h.check(t0 + 31s + 3h + 59s).empty());  // freshly timed: the 60 s floor from the release
  auto suspect = h.check(t0 + 31s + 3h + 61s);
  ASSERT_EQ(suspect.size(), 1u);
  EXPECT_EQ(suspect[0].ranks, (std::vector<int>{0, 1}));
}

// A running rank's report as its node sends it: `steps` so far, the longest interval since the
// last report, progress just now.
static RankReport report(int rank, long steps, long max_interval_ms, const char* state) {
  RankReport r;
  r.rank = rank;
  r.phase = RankPhase::Running;
  r.state = state;
  r.steps = steps;
  r.max_interval_ms = max_interval_ms;
  r.progress_age_ms = 0;
  return r;
}

// HangWatch: a rank reported in its debugger holds the tracker; the step interval reported
// after the release spans the hold and is not learnt.
TEST(HangWatch, ARankInItsDebuggerHoldsTheWatchAndItsLongStepIsNotLearnt) {
  HangWatch w;
  w.on_generation(Generation{0}, 2, t0);
  for (int s = 1; s <= 20; ++s)
    w.on_ranks_reported(Generation{0}, {report(0, s, 300, "running"), report(1, s, 300, "running")}, t0 + std::chrono::seconds(s));
  const double learnt = w.tracker().learnt_interval_s();
  EXPECT_GT(learnt, 0);
  w.on_ranks_reported(Generation{0}, {report(0, 20, 0, "running"), report(1, 20, 0, "debugging")}, t0 + 30s);
  EXPECT_TRUE(w.tracker().held());
  EXPECT_TRUE(w.check(t0 + 2h).empty());
  // Released: each rank's first step after it took the whole hold.
  w.on_ranks_reported(Generation{0}, {report(0, 21, 7200000, "running"), report(1, 21, 7200000, "running")}, t0 + 2h);
  EXPECT_FALSE(w.tracker().held());
  EXPECT_DOUBLE_EQ(w.tracker().learnt_interval_s(), learnt);
}

// The rank that waited in its collective for the held one reports "running" at the release
// without a new step; the step it then finishes spans the hold and is not learnt either (a
// 12 s step learnt this way once raised the hang deadline to 4 min).
TEST(HangWatch, AStepFinishedSeveralReportsAfterTheReleaseIsStillNotLearnt) {
  HangWatch w;
  w.on_generation(Generation{0}, 2, t0);
  for (int s = 1; s <= 20; ++s)
    w.on_ranks_reported(Generation{0}, {report(0, s, 300, "running"), report(1, s, 300, "running")}, t0 + std::chrono::seconds(s));
  const double learnt = w.tracker().learnt_interval_s();
  w.on_ranks_reported(Generation{0}, {report(0, 20, 0, "running"), report(1, 20, 0, "debugging")}, t0 + 30s);
  ASSERT_TRUE(w.tracker().held());
  // Released: rank 1 is running, rank 0 still waits for it; no step yet on either.
  w.on_ranks_reported(Generation{0}, {report(0, 20, 0, "running"), report(1, 20, 0, "running")}, t0 + 42s);
  w.on_ranks_reported(Generation{0}, {report(0, 20, 0, "running"), report(1, 20, 0, "running")}, t0 + 42500ms);
  EXPECT_FALSE(w.tracker().held());
  // Then both finish the step that spans the hold, in separate reports.
  w.on_ranks_reported(Generation{0}, {report(0, 21, 12000, "running")}, t0 + 43s);
  w.on_ranks_reported(Generation{0}, {report(1, 21, 12000, "running")}, t0 + 43100ms);
  EXPECT_DOUBLE_EQ(w.tracker().learnt_interval_s(), learnt);
  // The steps after it teach as before.
  w.on_ranks_reported(Generation{0}, {report(0, 22, 400, "running"), report(1, 22, 400, "running")}, t0 + 44s);
  EXPECT_DOUBLE_EQ(w.tracker().learnt_interval_s(), 0.4);
}

namespace {

using ddplaunch::stack_samples::running;

std::vector<rendezvous::NodeRecord> two_nodes() {
  std::vector<rendezvous::NodeRecord> out(2);
  for (int i = 0; i < 2; ++i) {
    out[i].node_rank = i;
    out[i].facts.nproc = 2;
    out[i].facts.hostname = "host" + std::to_string(i);
    out[i].observed_address = "127.0.0.1";
  }
  return out;
}

PolicySettings policy_settings(int max_restarts, bool hang_restarts) {
  PolicySettings s;
  s.restart.max_restarts = max_restarts;
  s.restart.jitter = 0;
  s.worker_master_addr = "127.0.0.1";
  s.master_is_loopback = true;
  s.hang_action = hang_restarts ? HangAction::Restart : HangAction::Stop;
  return s;
}

}  // namespace

TEST(HangWatch, ProgressIsDatedByTheNodesAgeNotByTheReportsArrival) {
  HangSettings s;
  s.suspect_floor_s = 10;
  s.hang_minimum_s = 30;
  HangWatch w(s);
  w.on_generation(Generation{0}, 2, t0);
  RankReport r0 = running(0), r1 = running(1);
  r0.steps = r1.steps = 50;
  r0.progress_age_ms = 0;
  r1.progress_age_ms = 8000;  // rank 1's last step was 8 s before this report
  w.on_ranks_reported(Generation{0}, {r0, r1}, t0 + 20s);
  auto events = w.check(t0 + 23s);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].ranks, std::vector<int>{1});
  w.on_ranks_reported(Generation{1}, {r0}, t0 + 24s);  // another generation's report changes nothing
  EXPECT_EQ(w.check(t0 + 31s).size(), 1u) << "rank 0 is now suspect too";
}

TEST(HangWatch, ASectionFromTheReportsGetsTheSectionsDeadlines) {
  HangSettings s;
  s.suspect_floor_s = 5;
  s.hang_minimum_s = 10;
  s.section_suspect_floor_s = 300;
  HangWatch w(s);
  w.on_generation(Generation{0}, 1, t0);
  RankReport r = running(0);
  r.steps = 10;
  r.progress_age_ms = 0;
  r.section = "checkpoint";
  w.on_ranks_reported(Generation{0}, {r}, t0);
  EXPECT_TRUE(w.check(t0 + 60s).empty()) << "a minute in a checkpoint is not suspect";
  r.section.clear();
  w.on_ranks_reported(Generation{0}, {r}, t0 + 61s);
  EXPECT_EQ(w.tracker().longest_sections().at("checkpoint"), 61);
  EXPECT_EQ(w.check(t0 + 67s).size(), 1u) << "out of the section, the short floor applies again";
}

TEST(HangAction, AutoRestartsOnlyWhenRuntimeRestartsWereAsked) {
  RestartSettings r;
  EXPECT_EQ(resolve_hang_action(HangActionSetting::Auto, r), HangAction::Stop);
  r.max_restarts = 2;
  EXPECT_EQ(resolve_hang_action(HangActionSetting::Auto, r), HangAction::Restart);
  r.on_runtime_failure = false;
  EXPECT_EQ(resolve_hang_action(HangActionSetting::Auto, r), HangAction::Stop);
  EXPECT_EQ(resolve_hang_action(HangActionSetting::Report, r), HangAction::Report);
  r.max_restarts = 5;
  r.on_runtime_failure = true;
  EXPECT_EQ(resolve_hang_action(HangActionSetting::Stop, r), HangAction::Stop);
}

TEST(JobPolicyHang, AHangStopsWithARootCauseNamingTheStuckRankAndItsStacks) {
  JobPolicy policy(policy_settings(0, false));
  policy.on_nodes_joined(Generation{0}, two_nodes(), t0);
  auto d = policy.on_hang(Generation{0}, 3, "hang: rank 3 made no progress for 15 s\nstacks of 4 rank(s) ...", t0);
  const decision::OrderStop* stop = nullptr;
  for (const auto& x : d)
    if (auto* s = std::get_if<decision::OrderStop>(&x)) stop = s;
  ASSERT_TRUE(stop);
  auto end = policy.on_node_finished(0, Generation{0}, 1);
  auto last = policy.on_node_finished(1, Generation{0}, 1);
  std::string text;
  for (const auto& x : last)
    if (auto* l = std::get_if<decision::Log>(&x)) text += l->text;
  EXPECT_NE(text.find("root cause: rank 3 (local rank 1) on node 1 (host1)"), std::string::npos) << text;
  EXPECT_NE(text.find("made no progress past the hang deadline during runtime"), std::string::npos) << text;
  EXPECT_NE(text.find("stacks of 4 rank(s)"), std::string::npos) << text;
}

TEST(JobPolicyHang, HangActionRestartSpendsMaxRestartsAndStopNeverRestarts) {
  JobPolicy restarting(policy_settings(1, true));
  restarting.on_nodes_joined(Generation{0}, two_nodes(), t0);
  bool scheduled = false;
  for (const auto& x : restarting.on_hang(Generation{0}, 1, "hang", t0))
    scheduled = scheduled || std::holds_alternative<decision::ScheduleRestart>(x);
  EXPECT_TRUE(scheduled);

  JobPolicy stopping(policy_settings(5, false));
  stopping.on_nodes_joined(Generation{0}, two_nodes(), t0);
  bool stopped = false;
  std::string why;
  for (const auto& x : stopping.on_hang(Generation{0}, 1, "hang", t0)) {
    stopped = stopped || std::holds_alternative<decision::OrderStop>(x);
    if (auto* l = std::get_if<decision::Log>(&x)) why += l->text;
  }
  EXPECT_TRUE(stopped);
  EXPECT_NE(why.find("hang.action is stop"), std::string::npos) << why;
  EXPECT_TRUE(stopping.on_hang(Generation{1}, 1, "hang", t0).empty()) << "another generation's hang decides nothing";
}

TEST(JobPolicyHang, HangActionReportOnlyWarnsAndTheJobGoesOn) {
  PolicySettings s = policy_settings(1, false);
  s.hang_action = HangAction::Report;
  JobPolicy policy(s);
  policy.on_nodes_joined(Generation{0}, two_nodes(), t0);
  auto d = policy.on_hang(Generation{0}, 1, "hang", t0);
  ASSERT_EQ(d.size(), 1u);
  auto* log = std::get_if<decision::Log>(&d.front());
  ASSERT_TRUE(log);
  EXPECT_EQ(log->severity, decision::Severity::Warn);
  EXPECT_NE(log->text.find("hang.action is report: nothing is stopped"), std::string::npos) << log->text;
  EXPECT_EQ(policy.phase(), JobPhase::Running);
}

TEST(JobPolicyHang, HistoryRaisesTheInitDeadlineAndSaysSo) {
  auto s = policy_settings(0, false);
  s.init_deadline.base_s = 10;
  s.init_deadline.min_s = 10;
  s.init_deadline.per_node_s = 0;
  s.init_deadline.rtt_factor = 0;
  s.history_init_s = 900;
  s.history_explained = "3 x init p99 5 min, history: p99 of 4 run(s) (/tmp/h)";
  JobPolicy policy(s);
  policy.on_nodes_joined(Generation{0}, two_nodes(), t0);
  EXPECT_DOUBLE_EQ(policy.init_deadline().seconds(), 900);
  EXPECT_NE(policy.init_deadline().explained().find("raised to 15 min from history (3 x init p99"), std::string::npos)
      << policy.init_deadline().explained();
  // The user's ceiling holds: history raises the deadline up to timeout.max_s, never past it.
  s.init_deadline.max_s = 60;
  JobPolicy capped(s);
  capped.on_nodes_joined(Generation{0}, two_nodes(), t0);
  EXPECT_DOUBLE_EQ(capped.init_deadline().seconds(), 60);
  EXPECT_NE(capped.init_deadline().explained().find("raised to 60 s from history, capped by timeout.max_s 60 s"),
            std::string::npos)
      << capped.init_deadline().explained();
}

// A rank reported running that shows no progress of any kind past the suspect floor is not
// judged; the watch says so once, naming such ranks, and never again in the job.
TEST(HangWatch, RanksWithoutAnyProgressAreNamedOnceAfterTheSuspectFloor) {
  HangSettings settings;
  settings.suspect_floor_s = 60;
  HangWatch w(settings);
  w.on_generation(Generation{0}, 3, t0);
  RankReport silent0 = report(0, 0, 0, "running"), silent1 = report(1, 0, 0, "running");
  silent0.progress_age_ms = silent1.progress_age_ms = -1;  // no progress yet
  w.on_ranks_reported(Generation{0}, {silent0, silent1, report(2, 1, 0, "running")}, t0 + 1s);
  EXPECT_FALSE(w.unwatched_note(t0 + 60s));
  auto note = w.unwatched_note(t0 + 61s);
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("ranks 0, 1 have run 60 s since init without any sign of progress"), std::string::npos) << *note;
  EXPECT_NE(note->find("torch.distributed collective"), std::string::npos) << *note;
  for (const HangEvent& e : w.check(t0 + 3600s))  // rank 2 is judged (it progressed once); 0 and 1 are not
    EXPECT_EQ(e.ranks, (std::vector<int>{2})) << e.text;
  EXPECT_FALSE(w.unwatched_note(t0 + 7200s)) << "said once";
}
