// RankDebugSessions without a debugger running: a console line goes to the rank's pdb (and is
// reported lost when the rank is not in it), a pdb's events become debug messages stamped
// with the generation, and gdb is refused, with the reason, for a rank that is not running.
// Under a master that proved nothing (a tokenless job's), nothing of a debugger is relayed, no
// order is carried out and a stopped rank is told to continue; an order of another generation
// is not carried out either.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "wire/launcher_messages.h"
#include "agent/rank_debug_sessions.h"
#include "recording_master_link.h"

namespace ddplaunch {
namespace {

TEST(RankDebugSessions, AConsoleLineGoesToTheRanksPdb) {
  FakeNode node(1, 6, Generation{3});  // rank 6
  RankDebugSessions sessions(node.io, "node-a", node.debug_seams());
  sessions.set_master_proven(true);
  sessions.input(Generation{3}, 6, "bt");
  ASSERT_EQ(node.keyboard.lines.size(), 1u);
  EXPECT_EQ(node.keyboard.lines[0], std::make_pair(6, std::string("bt")));
  node.keyboard.delivers = false;  // not delivered: only a warning, nothing to the master
  sessions.input(Generation{3}, 6, "c");
  EXPECT_TRUE(node.master.sent.empty());
}

TEST(RankDebugSessions, APdbsEventsBecomeDebugMessages) {
  FakeNode node(1, 6, Generation{3});  // rank 6
  RankDebugSessions sessions(node.io, "node-a", node.debug_seams());
  sessions.set_master_proven(true);
  Worker& w = *node.view.ranks[0];
  sessions.on_stopped(w, debug::StopLocation{}, "breakpoint");
  sessions.on_output(w, "(Pdb) ", true);
  sessions.on_left(w);
  ASSERT_EQ(node.master.sent.size(), 3u);
  EXPECT_EQ(messages::kind_of(node.master.sent[0]), messages::Kind::DebugStopped);
  EXPECT_EQ(messages::kind_of(node.master.sent[1]), messages::Kind::DebugOutput);
  EXPECT_EQ(messages::kind_of(node.master.sent[2]), messages::Kind::DebugResumed);
  for (const auto& m : node.master.sent) EXPECT_EQ(m.generation, Generation{3});
}

TEST(RankDebugSessions, GdbIsRefusedForARankThatIsNotRunning) {
  FakeNode node(1, 6, Generation{3});  // rank 6
  RankDebugSessions sessions(node.io, "node-a", node.debug_seams());
  sessions.set_master_proven(true);
  sessions.attach_gdb(Generation{3}, 99);  // another node's rank: not this node's to answer
  EXPECT_TRUE(node.master.sent.empty());
  sessions.attach_gdb(Generation{3}, 6);  // no pid yet
  ASSERT_EQ(node.master.sent.size(), 1u);
  auto output = messages::decode_debug_output(node.master.sent[0]);
  ASSERT_TRUE(output);
  EXPECT_EQ(output->lines, "rank 6 is not running: no gdb\n");
  EXPECT_TRUE(node.events.kinds.empty()) << "gdb held nothing";
}

TEST(RankDebugSessions, UnderAnUnprovenMasterNothingIsRelayedNoOrderCarriedOutAndTheRankContinues) {
  FakeNode node(1, 6, Generation{3});  // rank 6
  RankDebugSessions sessions(node.io, "node-a", node.debug_seams());  // no master proved itself yet
  Worker& w = *node.view.ranks[0];
  sessions.on_stopped(w, debug::StopLocation{}, "breakpoint");
  ASSERT_EQ(node.keyboard.lines.size(), 1u);  // the rank is told to go on, as an unattended stop is
  EXPECT_EQ(node.keyboard.lines[0], std::make_pair(6, std::string("continue")));
  sessions.on_output(w, "secret = 42\n(Pdb) ", true);
  sessions.on_left(w);
  sessions.input(Generation{3}, 6, "import os; os.system('id')");
  sessions.attach_gdb(Generation{3}, 6);
  EXPECT_TRUE(node.master.sent.empty());
  EXPECT_EQ(node.keyboard.lines.size(), 1u);
}

TEST(RankDebugSessions, AnOrderOfAnotherGenerationIsNotCarriedOut) {
  FakeNode node(1, 6, Generation{3});  // rank 6
  RankDebugSessions sessions(node.io, "node-a", node.debug_seams());
  sessions.set_master_proven(true);
  sessions.input(Generation{2}, 6, "bt");
  sessions.attach_gdb(Generation{4}, 6);
  EXPECT_TRUE(node.keyboard.lines.empty());
  EXPECT_TRUE(node.master.sent.empty());
}

}  // namespace
}  // namespace ddplaunch
