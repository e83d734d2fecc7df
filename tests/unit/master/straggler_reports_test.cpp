// StragglerReports: the ranks' measured compute and wait reach the straggler watch; a named
// straggler shows in the timeline (an instant on its lane, compute-share counters), in the
// status table and the end summary, and counts against its host; a rank held in a debugger
// or a section pauses the watch.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "master/job_end_report.h"
#include "master/status_table.h"
#include "master/straggler_reports.h"
#include "timeline/time_account.h"
#include "policy_stories.h"
#include "two_node_settings.h"

namespace ddplaunch {
namespace {

using std::chrono::seconds;

// Two nodes of two ranks each; rank 3 (node 1, "host1") computes `slow` of its time, the
// others 20 %.
struct Master {
  JobPolicy policy{testing::settings()};
  MasterTimeline timeline{policy, two_node_settings("straggler-test").config};
  StragglerReports stragglers{timeline};
  PolicyClock::time_point now = PolicyClock::now();

  Master() {
    policy.on_nodes_joined(Generation{0}, testing::nodes(2), now);
    timeline.begin_generation(Generation{0}, testing::nodes(2), 4, 30);
    stragglers.start_generation(Generation{0}, 4, std::chrono::seconds(2), now);
  }
  static RankReport rank(int r, double compute, const std::string& state = "running") {
    RankReport report;
    report.rank = r;
    report.phase = RankPhase::Running;
    report.state = state;
    report.steps = 100;
    report.span_ms = 2000;
    report.wait_ms = static_cast<long>(2000 * (1 - compute));
    return report;
  }
  // What node 1 says of itself, and the CPU rank 3 got (-1: not measured).
  NodeSignals node1_signals;
  long rank3_millicores = -1;

  void run_for(seconds how_long, double slow, const std::string& rank0_state = "running") {
    for (const auto until = now + how_long; now < until;) {
      now += seconds(2);
      std::vector<RankReport> node0{rank(0, 0.2, rank0_state), rank(1, 0.2)}, node1{rank(2, 0.2), rank(3, slow)};
      node1[1].cpu_millicores = rank3_millicores;
      policy.on_ranks_reported(0, Generation{0}, node0, now);
      policy.on_ranks_reported(1, Generation{0}, node1, now);
      stragglers.on_ranks_reported(0, "host0", Generation{0}, node0, now);
      stragglers.on_ranks_reported(1, "host1", Generation{0}, node1, now, node1_signals);
      stragglers.check(now);
    }
  }
};

TEST(StragglerReports, ASlowRankIsNamedInTheTimelineStatusAndEndSummaryAndCountsAgainstItsHost) {
  Master m;
  m.run_for(seconds(40), 0.9);
  ASSERT_EQ(m.stragglers.straggler(), 3);
  const auto shares = m.stragglers.compute_shares(m.now);
  ASSERT_EQ(shares.size(), 4u);
  EXPECT_NEAR(shares.at(3), 0.9, 0.001);
  EXPECT_NEAR(shares.at(0), 0.2, 0.001);

  const auto trace = nlohmann::json::parse(m.timeline.json());
  int instants = 0, counters = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "i" && e["name"] == "straggler") {
      ++instants;
      EXPECT_EQ(e["pid"], 2);  // node 1
      EXPECT_EQ(e["tid"], 4);  // rank 3's lane
      EXPECT_NE(e["args"]["detail"].get<std::string>().find("rank 3 (node 1, host host1) computes 4.5x"), std::string::npos)
          << e.dump();
    }
    if (e["ph"] == "C") ++counters;
  }
  EXPECT_EQ(instants, 1);
  EXPECT_GE(counters, 4);  // every rank's share at least once

  StatusExtras extras;
  extras.compute_share = shares;
  extras.straggler = m.stragglers.straggler();
  const std::string table = render_status_table("straggler-test", m.policy, extras);
  EXPECT_NE(table.find("90 % slow"), std::string::npos) << table;
  EXPECT_NE(table.find("compute"), std::string::npos) << table;

  const auto summary = m.stragglers.summary_lines(m.now);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_NE(summary[0].find("rank 3 (node 1, host host1) held the job back for"), std::string::npos) << summary[0];
  EXPECT_NE(summary[0].find("(until the end)"), std::string::npos) << summary[0];
  EXPECT_EQ(m.stragglers.episodes_by_host(), (std::map<std::string, int>{{"host1", 1}}));
  const auto troubled = troubled_hosts(m.timeline, m.stragglers);
  ASSERT_EQ(troubled.size(), 1u);
  EXPECT_EQ(troubled[0].host, "host1");
  EXPECT_EQ(troubled[0].slowdowns, 1);

  // It catches up: its end is said, and the summary says how long it lasted.
  m.run_for(seconds(60), 0.2);
  EXPECT_FALSE(m.stragglers.straggler());
  const auto after = m.stragglers.summary_lines(m.now);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].find("(until the end)"), std::string::npos) << after[0];
}

// Node 1's rank 3 is starved (a sliver of a core, its cgroup throttled): the straggler's line,
// its timeline instant, the end summary and `ddplaunch status` say so; node-wide figures both
// nodes share (the same pressure) are not said.
TEST(StragglerReports, TheStragglersNodeSignalsThatStandOutAreSaidWithIt) {
  Master m;
  m.rank3_millicores = 50;
  m.node1_signals.throttled = 0.92;
  m.node1_signals.throttled_cgroup = "/ddpl-straggler-1";
  m.node1_signals.cpu_pressure = 0.05;
  m.run_for(seconds(40), 0.9);
  ASSERT_EQ(m.stragglers.straggler(), 3);
  const std::string said = "node 1: rank 3 got 0.05 of a core; cgroup /ddpl-straggler-1 throttled in 92 % of its CPU periods";
  EXPECT_EQ(m.stragglers.explaining_signals(),
            (std::vector<std::string>{"rank 3 got 0.05 of a core", "cgroup /ddpl-straggler-1 throttled in 92 % of its CPU periods"}));
  const auto trace = nlohmann::json::parse(m.timeline.json());
  int instants = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "i" || e["name"] != "straggler") continue;
    ++instants;
    EXPECT_NE(e["args"]["detail"].get<std::string>().find("of each step for it — " + said), std::string::npos) << e.dump();
  }
  EXPECT_EQ(instants, 1);
  const auto summary = m.stragglers.summary_lines(m.now);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_NE(summary[0].find(" of each step — " + said), std::string::npos) << summary[0];

  StatusExtras extras;
  extras.straggler = m.stragglers.straggler();
  extras.cpu_cores = m.stragglers.cpu_cores();
  extras.straggler_signals = m.stragglers.explaining_signals();
  EXPECT_EQ(extras.cpu_cores, (std::map<int, double>{{3, 0.05}}));
  const auto status = nlohmann::json::parse(render_status_json("straggler-test", m.policy, extras));
  EXPECT_EQ(status["straggler_signals"].size(), 2u) << status.dump();
  for (const auto& r : status["ranks"]) {
    if (r["rank"] == 3) EXPECT_DOUBLE_EQ(r["cpu_cores"].get<double>(), 0.05);
    else EXPECT_TRUE(r["cpu_cores"].is_null()) << r.dump();
  }
  const std::string table = render_status_table("straggler-test", m.policy, extras);
  EXPECT_NE(table.find("rank 3 holds the job back; on its node: rank 3 got 0.05 of a core; cgroup"), std::string::npos)
      << table;
}

// A straggler whose node measured nothing that stands out is named as before, with nothing added.
TEST(StragglerReports, AStragglerWithoutExplainingSignalsIsNamedWithNothingAdded) {
  Master m;
  m.rank3_millicores = 950;
  m.run_for(seconds(40), 0.9);
  ASSERT_EQ(m.stragglers.straggler(), 3);
  EXPECT_TRUE(m.stragglers.explaining_signals().empty());
  const auto summary = m.stragglers.summary_lines(m.now);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].find(" — "), std::string::npos) << summary[0];
}

TEST(StragglerReports, ARankHeldInADebuggerOrASectionMakesNobodyAStraggler) {
  for (const std::string held : {"debugging", "paused"}) {
    Master m;
    m.run_for(seconds(60), 0.9, held);  // rank 0 held all along: the others' waiting is for it
    EXPECT_FALSE(m.stragglers.straggler()) << held;
  }
}

TEST(StragglerReports, ReportsOfAnEarlierGenerationAndUnknownRanksAreIgnored) {
  Master m;
  m.stragglers.start_generation(Generation{1}, 4, std::chrono::seconds(2), m.now);
  m.run_for(seconds(60), 0.9);  // reports say generation 0
  EXPECT_FALSE(m.stragglers.straggler());
  EXPECT_TRUE(m.stragglers.compute_shares(m.now).empty());
  m.stragglers.on_ranks_reported(0, "host0", Generation{1}, {Master::rank(7, 0.9), Master::rank(-1, 0.9)}, m.now);
  EXPECT_TRUE(m.stragglers.compute_shares(m.now + seconds(30)).empty());
}

// The straggler named now is handed on (to the policy's straggler action) with its node and
// how long it has held the job back; nobody while the job is balanced or once it caught up.
TEST(StragglerReports, TheStragglerNamedNowIsHandedOnWithHowLongItHeldTheJobBack) {
  Master m;
  m.run_for(seconds(10), 0.2);
  EXPECT_FALSE(m.stragglers.holding_back(m.now));
  m.run_for(seconds(40), 0.9);
  ASSERT_EQ(m.stragglers.straggler(), 3);
  const auto holding = m.stragglers.holding_back(m.now);
  ASSERT_TRUE(holding);
  EXPECT_EQ(holding->rank, 3);
  EXPECT_EQ(holding->node, 1);
  EXPECT_GT(holding->held_s, 10.0);
  EXPECT_LT(holding->held_s, 40.0);
  EXPECT_EQ(holding->what.rfind("it computes ", 0), 0u) << holding->what;
  EXPECT_NE(holding->what.find("x the median of the other ranks; they wait 80 % of each step"), std::string::npos)
      << holding->what;
  m.run_for(seconds(60), 0.2);
  EXPECT_FALSE(m.stragglers.holding_back(m.now));
}

// `ddplaunch status` says what the job spent so far, as a line and in its JSON.
TEST(StragglerReports, TheStatusSaysTheTimeAccountSoFar) {
  Master m;
  m.run_for(seconds(10), 0.2);
  const timeline::TimeAccount account = m.timeline.time_account();
  StatusExtras extras;
  extras.time_account_line = timeline::time_account_line(account);
  extras.time_account_json = timeline::time_account_json(account);
  const std::string table = render_status_table("straggler-test", m.policy, extras);
  EXPECT_NE(table.find("\nso far: effective training time "), std::string::npos) << table;
  const auto status = nlohmann::json::parse(render_status_json("straggler-test", m.policy, extras));
  ASSERT_TRUE(status["time_account"].is_object()) << status.dump();
  EXPECT_TRUE(status["time_account"].contains("effective_training_share")) << status.dump();
  EXPECT_TRUE(nlohmann::json::parse(render_status_json("straggler-test", m.policy, {}))["time_account"].is_null());
}

}  // namespace
}  // namespace ddplaunch
