// RankStateReporter: a burst of changes becomes one rank_states report, the periodic report
// comes at the period it is given while the workers run, nothing goes out before the node is
// assigned or without a master, and a stopped reporter sends nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "wire/launcher_messages.h"
#include "agent/rank_state_reporter.h"
#include "recording_master_link.h"

namespace ddplaunch {
namespace {

TEST(RankStateReporter, ABurstOfChangesIsOneReport) {
  FakeNode node(3, 10, Generation{4});
  RankStateReporter reporter(node.io, "node-a", "", node.view, node.master);
  for (int change = 0; change < 100; ++change) reporter.send_soon();
  EXPECT_TRUE(node.master.sent.empty()) << "nothing before the coalescing timer";
  node.run_for(RankStateReporter::kCoalescing * 5);
  ASSERT_EQ(node.master.count(messages::Kind::RankStates), 1);
  auto states = messages::decode_rank_states(node.master.sent.front());
  ASSERT_TRUE(states);
  EXPECT_EQ(states->host, "node-a");
  ASSERT_EQ(states->ranks.size(), 3u);
  EXPECT_EQ(node.master.sent.front().generation, Generation{4});

  reporter.send_soon();  // the next burst: a report of its own
  node.run_for(RankStateReporter::kCoalescing * 5);
  EXPECT_EQ(node.master.count(messages::Kind::RankStates), 2);
}

TEST(RankStateReporter, TheFirstReportCarriesTheRanksTimeline) {
  FakeNode node(3, 10, Generation{4});
  RankStateReporter reporter(node.io, "node-a", "", node.view, node.master);
  reporter.send_now();
  EXPECT_EQ(node.master.count(messages::Kind::RankStates), 1);
  EXPECT_EQ(node.master.count(messages::Kind::TimelineEvents), 1);
}

TEST(RankStateReporter, NothingBeforeTheAssignmentOrWithoutAMaster) {
  FakeNode node(3, 10, Generation{4});
  RankStateReporter reporter(node.io, "node-a", "", node.view, node.master);
  node.view.step = NodeState::Joining;
  reporter.send_now();
  node.view.step = NodeState::Running;
  node.master.is_connected = false;
  reporter.send_now();
  reporter.send_timeline();
  EXPECT_TRUE(node.master.sent.empty());

  node.master.is_connected = true;  // the timeline events waited for the master
  reporter.send_timeline();
  EXPECT_EQ(node.master.count(messages::Kind::TimelineEvents), 1);
}

// The first periodic report comes after a random half to a whole period (the nodes of a job
// must not all report in the same instant), then one every period, each moved to the wall
// clock's grid (an eighth of this period: never by more than a sixteenth).
TEST(RankStateReporter, ThePeriodicReportComesAtItsPeriodWhileTheWorkersRun) {
  FakeNode node(3, 10, Generation{4});
  RankStateReporter reporter(node.io, "node-a", "", node.view, node.master);
  const auto period = std::chrono::milliseconds(100);
  const auto began = std::chrono::steady_clock::now();
  reporter.send_periodically(period);
  node.run_until([&] { return node.master.count(messages::Kind::RankStates) >= 1; });
  EXPECT_GE(std::chrono::steady_clock::now() - began, period / 2 - period / 16) << "the first after half a period at least";
  node.run_until([&] { return node.master.count(messages::Kind::RankStates) >= 3; });
  ASSERT_EQ(node.master.count(messages::Kind::RankStates), 3);
  EXPECT_GE(std::chrono::steady_clock::now() - began, period / 2 + 2 * period - 3 * period / 16)
      << "one report a period, never sooner";
  node.view.active = false;  // the workers ended: the period ends with them
  node.run_for(3 * period);
  EXPECT_EQ(node.master.count(messages::Kind::RankStates), 3);
}

TEST(RankStateReporter, AStoppedReporterSendsNothing) {
  FakeNode node(3, 10, Generation{4});
  RankStateReporter reporter(node.io, "node-a", "", node.view, node.master);
  reporter.send_soon();
  reporter.send_periodically(std::chrono::milliseconds(10));
  reporter.stop();
  node.run_for(RankStateReporter::kCoalescing * 5);
  EXPECT_TRUE(node.master.sent.empty());
}

TEST(RankStateReporter, TheLogDirIsShownAbsolute) {
  FakeNode node(3, 10, Generation{4});
  RankStateReporter reporter(node.io, "node-a", "logs/./run", node.view, node.master);
  reporter.send_now();
  auto states = messages::decode_rank_states(node.master.sent.front());
  ASSERT_TRUE(states);
  EXPECT_TRUE(states->log_dir.starts_with("/")) << states->log_dir;
  EXPECT_TRUE(states->log_dir.ends_with("/logs/run")) << states->log_dir;
}

}  // namespace
}  // namespace ddplaunch
