// Hang detection's pure parts: grouping and summarising stacks (stack_report), the rank reports'
// progress and the stack messages on the wire, HangWatch (rank reports → learnt deadlines),
// the hang action and JobPolicy's hang decision.
#include <gtest/gtest.h>

#include "agent/launcher_messages.h"
#include "agent/message_bounds.h"
#include "policy/stacks_query.h"
#include "policy/hang_watch.h"
#include "policy/job_policy.h"
#include "policy/stack_report.h"

namespace {

using namespace ddplaunch;
using namespace std::chrono_literals;
const PolicyClock::time_point t0 = PolicyClock::time_point{} + 1000s;

// What faulthandler writes for a rank stuck on its own, and for one waiting in DDP's backward.
const std::string kStalledRaw =
    "Thread 0x00007f3a1c5fe6c0 (most recent call first):\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 324 in wait\n"
    "\n"
    "Current thread 0x00007f3a2b1c4740 (most recent call first):\n"
    "  File \"/work/hang_ddp.py\", line 22 in stall_here\n"
    "  File \"/work/hang_ddp.py\", line 57 in main\n"
    "  File \"/work/hang_ddp.py\", line 64 in <module>\n";
const std::string kWaitingRaw =
    "Current thread 0x00007f11aa0c4740 (most recent call first):\n"
    "  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 200 in backward\n"
    "  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 487 in backward\n"
    "  File \"/work/hang_ddp.py\", line 50 in main\n"
    "  File \"/work/hang_ddp.py\", line 64 in <module>\n";

RankReport running(int rank) {
  RankReport r;
  r.rank = rank;
  r.pid = 10 + rank;
  r.phase = RankPhase::Running;
  r.init_entries = 1;
  r.state = "running";
  return r;
}

RankStack python_stack(int rank, const std::string& raw) {
  RankStack s;
  s.rank = rank;
  s.node = rank / 2;
  s.host = "host" + std::to_string(rank / 2);
  s.pid = 1000L + rank;
  s.source = "python";
  s.text = normalise_python_stack(raw);
  return s;
}

TEST(StackReport, RankRangesCompressRuns) {
  EXPECT_EQ(rank_ranges({8, 0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 15}), "0-6,8-15");
  EXPECT_EQ(rank_ranges({7}), "7");
  EXPECT_EQ(rank_ranges({3, 1, 1}), "1,3");
  EXPECT_EQ(rank_ranges({}), "");
}

TEST(StackReport, PythonStacksLoseThreadIdsSoIdenticalStacksCompareEqual) {
  std::string a = normalise_python_stack(kWaitingRaw);
  std::string b = kWaitingRaw;
  b.replace(b.find("0x00007f11aa0c4740"), 18, "0x00007fffffff0000");
  EXPECT_EQ(a, normalise_python_stack(b));
  EXPECT_EQ(a.find("0x"), std::string::npos) << a;
}

TEST(StackReport, SummaryNamesTheInnermostFrameAndTheProgramsOwnLine) {
  EXPECT_EQ(stack_summary(normalise_python_stack(kWaitingRaw)), "backward ← main() at hang_ddp.py:50");
  // The main thread (the one running <module>) is summarised, not the helper thread.
  EXPECT_EQ(stack_summary(normalise_python_stack(kStalledRaw)), "stall_here() at hang_ddp.py:22");
  EXPECT_EQ(stack_summary("wchan: futex_wait_queue\n"), "in the kernel: futex_wait_queue");
}

TEST(StackReport, NativeStacksLoseAddressesAndKeepSourceLines) {
  const std::string raw =
      "PID 4242 - process\n"
      "TID 4242:\n"
      "#0  0x00007f0d4b2ea4b0 __libc_pause - /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "    ../sysdeps/unix/sysv/linux/pause.c:29:10\n"
      "#1  0x000055d0c3a1b2c3 (anonymous namespace)::stall_forever() - /build/train_binary\n"
      "    /src/worker_shim/examples/train_binary.cpp:27:5\n"
      "#2  0x000055d0c3a1b9f1 main - /build/train_binary\n"
      "    /src/worker_shim/examples/train_binary.cpp:133:20\n";
  std::string text = normalise_native_stack(raw);
  EXPECT_EQ(text.find("0x"), std::string::npos) << text;
  EXPECT_NE(text.find("#1 stall_forever() (train_binary) at "
                      "/src/worker_shim/examples/train_binary.cpp:27"),
            std::string::npos)
      << text;
  EXPECT_EQ(stack_summary(text), "__libc_pause ← stall_forever() at train_binary.cpp:27");
}

TEST(StackReport, GdbStacksLoseAddressesAndThreadIds) {
  const std::string raw =
      "[New LWP 4243]\n"
      "Thread 1 (Thread 0x7f0d4b1e3740 (LWP 4242) \"train_binary\"):\n"
      "#0  0x00007f0d4b2ea4b0 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29\n"
      "#1  0x000055d0c3a1b2c3 in stall_forever () at /src/train_binary.cpp:27\n"
      "#2  main (argc=7, argv=0x7ffd) at /src/train_binary.cpp:133\n";
  std::string text = normalise_gdb_stack(raw);
  EXPECT_EQ(text,
            "Thread:\n  #0 __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29\n"
            "  #1 stall_forever () at /src/train_binary.cpp:27\n  #2 main (argc=7, argv=0x7ffd) at /src/train_binary.cpp:133\n");
  EXPECT_EQ(stack_summary(text), "__libc_pause ← stall_forever() at train_binary.cpp:27");
}

TEST(StackReport, GroupsIdenticalStacksAndNamesTheStuckRankFirst) {
  std::vector<RankStack> stacks;
  for (int r = 0; r < 16; ++r) stacks.push_back(python_stack(r, r == 7 ? kStalledRaw : kWaitingRaw));
  std::vector<int> silent;
  for (int r = 0; r < 16; ++r) silent.push_back(r);
  EXPECT_EQ(likely_stuck(stacks, silent), std::vector<int>{7});
  std::string text = render_grouped_stacks(stacks, silent, "hang: ranks 0-15 made no progress", 17);
  auto stuck = text.find("rank 7 (STUCK): stall_here() at hang_ddp.py:22 [python; node 3 host3]");
  auto others = text.find("ranks 0-6,8-15: backward ← main() at hang_ddp.py:50 [python;");
  ASSERT_NE(stuck, std::string::npos) << text;
  ASSERT_NE(others, std::string::npos) << text;
  EXPECT_LT(stuck, others) << text;
  EXPECT_NE(text.find("likely stuck: rank 7"), std::string::npos) << text;
  EXPECT_NE(text.find("no stack from rank 16"), std::string::npos) << text;
}

// The hang deadline's round was cut short (rank 1's stack tool too slow): the suspect round's
// verdict stands — unless this round shows that rank waiting in a collective now.
TEST(StackReport, ARoundWithoutTheStuckRanksStackKeepsTheEarlierVerdict) {
  std::vector<RankStack> partial{python_stack(0, kWaitingRaw)};
  EXPECT_EQ(likely_stuck(partial, {0, 1}, {1}), std::vector<int>{1});
  EXPECT_EQ(likely_stuck({}, {0, 1}, {1}), std::vector<int>{1});
  EXPECT_EQ(likely_stuck(partial, {0, 1}), (std::vector<int>{0, 1}));  // nothing earlier: every silent rank
  std::vector<RankStack> both_waiting{python_stack(0, kWaitingRaw), python_stack(1, kWaitingRaw)};
  EXPECT_EQ(likely_stuck(both_waiting, {0, 1}, {1}), (std::vector<int>{0, 1}));
  EXPECT_EQ(likely_stuck(partial, {0}, {1}), std::vector<int>{0});  // rank 1 moved on: not silent now
}

TEST(StackReport, EveryRankInACollectiveMeansEverySilentRankIsStuck) {
  std::vector<RankStack> stacks{python_stack(0, kWaitingRaw), python_stack(1, kWaitingRaw)};
  EXPECT_EQ(likely_stuck(stacks, {0, 1}), (std::vector<int>{0, 1}));
}

TEST(LauncherMessages, RankStatesCarryProgressAndOlderLinesStillDecode) {
  messages::RankStates states{"h", {}};
  RankReport r = running(3);
  r.steps = 120;
  r.max_interval_ms = 450;
  r.progress_age_ms = 2300;
  r.section = "checkpoint";
  states.ranks.push_back(r);
  auto decoded = messages::decode_rank_states(messages::encode(4, states));
  ASSERT_TRUE(decoded);
  ASSERT_EQ(decoded->ranks.size(), 1u);
  EXPECT_EQ(decoded->ranks[0].steps, 120);
  EXPECT_EQ(decoded->ranks[0].max_interval_ms, 450);
  EXPECT_EQ(decoded->ranks[0].progress_age_ms, 2300);
  EXPECT_EQ(decoded->ranks[0].section, "checkpoint");
  rendezvous::Message old = messages::encode(4, states);
  old.fields["ranks"] = "3 77 running 1 running\n";  // a launcher without progress reports
  auto from_old = messages::decode_rank_states(old);
  ASSERT_TRUE(from_old);
  EXPECT_EQ(from_old->ranks[0].progress_age_ms, -1);
  EXPECT_TRUE(from_old->ranks[0].section.empty());
}

TEST(LauncherMessages, StackMessagesRoundTripAndStayBounded) {
  auto ask = messages::decode_collect_stacks(messages::encode(2, messages::CollectStacks{9}));
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->request, 9);
  messages::RankStacksReply reply{9, "node-a", {python_stack(0, kWaitingRaw), python_stack(1, kStalledRaw)}};
  reply.stacks[1].text = std::string(200 * 1024, 'x');  // a huge stack is cut, not dropped
  rendezvous::Message m = messages::encode(2, reply);
  EXPECT_LE(messages::encoded_field_bytes(m), messages::kMaxMessageBytes);
  auto back = messages::decode_rank_stacks(m);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->stacks.size(), 2u);
  EXPECT_EQ(back->stacks[0].text, reply.stacks[0].text);
  EXPECT_EQ(back->stacks[1].rank, 1);
  EXPECT_LE(back->stacks[1].text.size(), messages::kMaxStackBytes);
  m.fields["count"] = "5000";
  EXPECT_FALSE(messages::decode_rank_stacks(m)) << "a count above the bound is refused";
}

TEST(HangWatch, ProgressIsDatedByTheNodesAgeNotByTheReportsArrival) {
  HangSettings s;
  s.suspect_floor_s = 10;
  s.hang_minimum_s = 30;
  HangWatch w(s);
  w.on_generation(0, 2, t0);
  RankReport r0 = running(0), r1 = running(1);
  r0.steps = r1.steps = 50;
  r0.progress_age_ms = 0;
  r1.progress_age_ms = 8000;  // rank 1's last step was 8 s before this report
  w.on_ranks_reported(0, {r0, r1}, t0 + 20s);
  auto events = w.check(t0 + 23s);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].ranks, std::vector<int>{1});
  w.on_ranks_reported(1, {r0}, t0 + 24s);  // another generation's report changes nothing
  EXPECT_EQ(w.check(t0 + 31s).size(), 1u) << "rank 0 is now suspect too";
}

TEST(HangWatch, ASectionFromTheReportsGetsTheSectionsDeadlines) {
  HangSettings s;
  s.suspect_floor_s = 5;
  s.hang_minimum_s = 10;
  s.section_suspect_floor_s = 300;
  HangWatch w(s);
  w.on_generation(0, 1, t0);
  RankReport r = running(0);
  r.steps = 10;
  r.progress_age_ms = 0;
  r.section = "checkpoint";
  w.on_ranks_reported(0, {r}, t0);
  EXPECT_TRUE(w.check(t0 + 60s).empty()) << "a minute in a checkpoint is not suspect";
  r.section.clear();
  w.on_ranks_reported(0, {r}, t0 + 61s);
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

TEST(JobPolicyHang, AHangStopsWithARootCauseNamingTheStuckRankAndItsStacks) {
  JobPolicy policy(policy_settings(0, false));
  policy.on_nodes_joined(0, two_nodes(), t0);
  auto d = policy.on_hang(0, 3, "hang: rank 3 made no progress for 15 s\nstacks of 4 rank(s) ...", t0);
  const decision::OrderStop* stop = nullptr;
  for (const auto& x : d)
    if (auto* s = std::get_if<decision::OrderStop>(&x)) stop = s;
  ASSERT_TRUE(stop);
  auto end = policy.on_node_finished(0, 0, 1);
  auto last = policy.on_node_finished(1, 0, 1);
  std::string text;
  for (const auto& x : last)
    if (auto* l = std::get_if<decision::Log>(&x)) text += l->text;
  EXPECT_NE(text.find("root cause: rank 3 (local rank 1) on node 1 (host1)"), std::string::npos) << text;
  EXPECT_NE(text.find("made no progress past the hang deadline during runtime"), std::string::npos) << text;
  EXPECT_NE(text.find("stacks of 4 rank(s)"), std::string::npos) << text;
}

TEST(JobPolicyHang, HangActionRestartSpendsMaxRestartsAndStopNeverRestarts) {
  JobPolicy restarting(policy_settings(1, true));
  restarting.on_nodes_joined(0, two_nodes(), t0);
  bool scheduled = false;
  for (const auto& x : restarting.on_hang(0, 1, "hang", t0))
    scheduled = scheduled || std::holds_alternative<decision::ScheduleRestart>(x);
  EXPECT_TRUE(scheduled);

  JobPolicy stopping(policy_settings(5, false));
  stopping.on_nodes_joined(0, two_nodes(), t0);
  bool stopped = false;
  std::string why;
  for (const auto& x : stopping.on_hang(0, 1, "hang", t0)) {
    stopped = stopped || std::holds_alternative<decision::OrderStop>(x);
    if (auto* l = std::get_if<decision::Log>(&x)) why += l->text;
  }
  EXPECT_TRUE(stopped);
  EXPECT_NE(why.find("hang.action is stop"), std::string::npos) << why;
  EXPECT_TRUE(stopping.on_hang(1, 1, "hang", t0).empty()) << "another generation's hang decides nothing";
}

TEST(JobPolicyHang, HangActionReportOnlyWarnsAndTheJobGoesOn) {
  PolicySettings s = policy_settings(1, false);
  s.hang_action = HangAction::Report;
  JobPolicy policy(s);
  policy.on_nodes_joined(0, two_nodes(), t0);
  auto d = policy.on_hang(0, 1, "hang", t0);
  ASSERT_EQ(d.size(), 1u);
  auto* log = std::get_if<decision::Log>(&d.front());
  ASSERT_TRUE(log);
  EXPECT_EQ(log->severity, decision::Severity::Warn);
  EXPECT_NE(log->text.find("hang.action is report: nothing is stopped"), std::string::npos) << log->text;
  EXPECT_EQ(policy.phase(), JobPhase::Running);
}

TEST(JobPolicyHang, HistoryRaisesTheInitDeadlineAndSaysSo) {
  auto s = policy_settings(0, false);
  s.timeout.base_s = 10;
  s.timeout.min_s = 10;
  s.timeout.per_node_s = 0;
  s.timeout.rtt_factor = 0;
  s.history_init_s = 900;
  s.history_explained = "3 x init p99 5 min, history: p99 of 4 run(s) (/tmp/h)";
  JobPolicy policy(s);
  policy.on_nodes_joined(0, two_nodes(), t0);
  EXPECT_DOUBLE_EQ(policy.timeout_s(), 900);
  EXPECT_NE(policy.timeout_explained().find("raised to 15 min from history (3 x init p99"), std::string::npos)
      << policy.timeout_explained();
  // The user's ceiling holds: history raises the deadline up to timeout.max_s, never past it.
  s.timeout.max_s = 60;
  JobPolicy capped(s);
  capped.on_nodes_joined(0, two_nodes(), t0);
  EXPECT_DOUBLE_EQ(capped.timeout_s(), 60);
  EXPECT_NE(capped.timeout_explained().find("raised to 60 s from history, capped by timeout.max_s 60 s"),
            std::string::npos)
      << capped.timeout_explained();
}

}  // namespace

// On-request stack rounds are rate limited and refused without a token on a
// multi-node job.
TEST(StacksQuery, OneRoundInFlightOnePerIntervalAndNoneWithoutATokenOnManyNodes) {
  using Kind = StacksQueryAnswer::Kind;
  const auto t0 = PolicyClock::time_point{} + std::chrono::hours(1);
  StacksQueryFacts f;
  f.now = t0;
  f.has_token = true;
  f.multi_node = true;
  EXPECT_EQ(decide_stacks_query(f).kind, Kind::Start);  // the first request
  f.in_flight = 4;
  f.last_round = 4;
  f.last_started = t0;
  f.now = t0 + std::chrono::seconds(30);
  auto join = decide_stacks_query(f);  // a round still running (however old) is joined
  EXPECT_EQ(join.kind, Kind::Join);
  EXPECT_EQ(join.round, 4);
  f.in_flight.reset();
  f.now = t0 + std::chrono::seconds(2);
  join = decide_stacks_query(f);  // finished, but 2 s ago: its stacks answer
  EXPECT_EQ(join.kind, Kind::Join);
  EXPECT_EQ(join.round, 4);
  f.now = t0 + std::chrono::seconds(6);
  EXPECT_EQ(decide_stacks_query(f).kind, Kind::Start);  // past the interval: a new round
  f.has_token = false;
  auto refused = decide_stacks_query(f);
  EXPECT_EQ(refused.kind, Kind::Refuse);
  EXPECT_NE(refused.refusal.find("DDPLAUNCH_TOKEN"), std::string::npos) << refused.refusal;
  f.multi_node = false;  // one node: the port is this machine's business
  EXPECT_EQ(decide_stacks_query(f).kind, Kind::Start);
}
