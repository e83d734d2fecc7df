// LineCollapser driven with explicit times: identical lines of several ranks merge within the
// window, a differing line is its own, no line waits past the window, each rank keeps its order.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "output/line_collapser.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;
using Clock = LineCollapser::Clock;
const Clock::time_point t0{};

std::vector<std::string> shown(const std::vector<LineCollapser::Line>& lines, int node_count = 1) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(collapsed_prefix(0, node_count, l.ranks) + " " + l.text);
  return out;
}

TEST(LineCollapser, IdenticalLinesOfFourRanksPrintOnceNamingThem) {
  LineCollapser c(150ms);
  for (int rank = 0; rank < 4; ++rank) EXPECT_TRUE(c.add(rank, OutputStream::Stdout, "Training finished", t0 + rank * 10ms).empty());
  EXPECT_TRUE(c.due(t0 + 149ms).empty()) << "nothing before its window ended";
  EXPECT_EQ(shown(c.due(t0 + 150ms)), (std::vector<std::string>{"[ranks 0-3] Training finished"}));
  EXPECT_TRUE(c.empty());
}

TEST(LineCollapser, ALineThatDiffersInAnyByteOrStreamIsItsOwn) {
  LineCollapser c(150ms);
  c.add(0, OutputStream::Stdout, "loss 0.25", t0);
  c.add(1, OutputStream::Stdout, "loss 0.26", t0);
  c.add(2, OutputStream::Stderr, "loss 0.25", t0);
  c.add(3, OutputStream::Stdout, "loss 0.25 ", t0);
  EXPECT_EQ(shown(c.flush()), (std::vector<std::string>{"[rank 0] loss 0.25", "[rank 1] loss 0.26", "[rank 2] loss 0.25",
                                                        "[rank 3] loss 0.25 "}));
}

// Ranks interleave their own lines: rank 1's "done" joins rank 0's, which moves behind rank
// 1's own step line, so every rank's lines keep their order.
TEST(LineCollapser, EachRankKeepsItsOrderWhenLinesMerge) {
  LineCollapser c(150ms);
  c.add(0, OutputStream::Stdout, "Loading ... done", t0);
  c.add(0, OutputStream::Stdout, "step of rank 0", t0);
  c.add(0, OutputStream::Stdout, "Training finished", t0);
  c.add(1, OutputStream::Stdout, "Loading ... done", t0 + 1ms);
  c.add(1, OutputStream::Stdout, "step of rank 1", t0 + 1ms);
  c.add(1, OutputStream::Stdout, "Training finished", t0 + 1ms);
  EXPECT_EQ(shown(c.flush()), (std::vector<std::string>{"[ranks 0-1] Loading ... done", "[rank 0] step of rank 0",
                                                        "[rank 1] step of rank 1", "[ranks 0-1] Training finished"}));
}

// A rank printing the same line twice gets two lines; a newcomer's own earlier line moves in
// front of the identical line it joins (it is the newcomer's alone); but a merged line of the
// newcomer's cannot move, nor can the waiting line move behind it when one of its own ranks has
// a line behind it (either would reorder a rank): the newcomer's line is then its own.
TEST(LineCollapser, ARankNeverJoinsItselfNorReordersAnother) {
  LineCollapser c(150ms);
  c.add(0, OutputStream::Stdout, "tick", t0);
  c.add(0, OutputStream::Stdout, "tick", t0);
  c.add(0, OutputStream::Stdout, "after", t0);
  c.add(1, OutputStream::Stdout, "own line", t0);
  c.add(1, OutputStream::Stdout, "tick", t0);
  EXPECT_EQ(shown(c.flush()), (std::vector<std::string>{"[rank 1] own line", "[ranks 0-1] tick", "[rank 0] tick",
                                                        "[rank 0] after"}));
  c.add(0, OutputStream::Stdout, "tick", t0);
  c.add(0, OutputStream::Stdout, "shared", t0);
  c.add(0, OutputStream::Stdout, "after", t0);
  c.add(1, OutputStream::Stdout, "shared", t0);
  c.add(1, OutputStream::Stdout, "tick", t0);
  EXPECT_EQ(shown(c.flush()), (std::vector<std::string>{"[rank 0] tick", "[ranks 0-1] shared", "[rank 0] after",
                                                        "[rank 1] tick"}));
  // Without a line of its own waiting, a newcomer joins the earliest identical line it may.
  c.add(0, OutputStream::Stdout, "tick", t0);
  c.add(0, OutputStream::Stdout, "tick", t0);
  c.add(1, OutputStream::Stdout, "tick", t0);
  c.add(1, OutputStream::Stdout, "tick", t0);
  EXPECT_EQ(shown(c.flush()), (std::vector<std::string>{"[ranks 0-1] tick", "[ranks 0-1] tick"}));
}

// The common log shape: every rank prints an identical line and at once its own ("all ready",
// then "loss 0.12N"), step after step. Each rank's lines arrive together, rank after rank (a
// pipe read holds all of them): the identical lines still merge, each rank's own lines between
// them, in rank order.
TEST(LineCollapser, AnIdenticalLineFollowedAtOnceByEachRanksOwnMerges) {
  LineCollapser c(150ms);
  for (int rank = 0; rank < 4; ++rank)
    for (int step = 0; step < 3; ++step) {
      EXPECT_TRUE(c.add(rank, OutputStream::Stdout, "all ready", t0 + rank * 5ms).empty());
      EXPECT_TRUE(c.add(rank, OutputStream::Stdout, "loss 0.12" + std::to_string(rank), t0 + rank * 5ms).empty());
    }
  EXPECT_TRUE(c.due(t0 + 149ms).empty()) << "nothing before its window ended";
  std::vector<std::string> expected;
  for (int step = 0; step < 3; ++step) {
    expected.push_back("[ranks 0-3] all ready");
    for (int rank = 0; rank < 4; ++rank) expected.push_back("[rank " + std::to_string(rank) + "] loss 0.12" + std::to_string(rank));
  }
  EXPECT_EQ(shown(c.due(t0 + 150ms + 15ms)), expected);
  EXPECT_TRUE(c.empty());
  // The same lines arriving line by line, ranks interleaved: merged alike.
  for (int step = 0; step < 3; ++step)
    for (int rank = 0; rank < 4; ++rank) c.add(rank, OutputStream::Stdout, "all ready", t0);
  for (int rank = 0; rank < 4; ++rank) c.add(rank, OutputStream::Stdout, "loss 0.12" + std::to_string(rank), t0);
  EXPECT_EQ(shown(c.flush()),
            (std::vector<std::string>{"[ranks 0-3] all ready", "[ranks 0-3] all ready", "[ranks 0-3] all ready",
                                      "[rank 0] loss 0.120", "[rank 1] loss 0.121", "[rank 2] loss 0.122",
                                      "[rank 3] loss 0.123"}));
}

// Many ranks moving their lines in front of the same waiting line run out of numbers between
// two neighbours: the order is renumbered and every rank's lines still keep their order.
TEST(LineCollapser, ManyMovesInFrontOfOneLineKeepEachRanksOrder) {
  LineCollapser c(150ms);
  c.add(0, OutputStream::Stdout, "shared", t0);
  constexpr int kRanks = 64;
  for (int rank = 1; rank <= kRanks; ++rank) {
    c.add(rank, OutputStream::Stdout, "first of " + std::to_string(rank), t0);
    c.add(rank, OutputStream::Stdout, "second of " + std::to_string(rank), t0);
    c.add(rank, OutputStream::Stdout, "shared", t0);
  }
  const std::vector<std::string> out = shown(c.flush());
  ASSERT_EQ(out.size(), 2u * kRanks + 1);
  EXPECT_EQ(out.back(), "[ranks 0-64] shared");
  for (int rank = 1; rank <= kRanks; ++rank) {
    const std::string n = std::to_string(rank);
    auto first = std::find(out.begin(), out.end(), "[rank " + n + "] first of " + n);
    auto second = std::find(out.begin(), out.end(), "[rank " + n + "] second of " + n);
    ASSERT_NE(first, out.end());
    EXPECT_LT(first, second) << n;
  }
}

TEST(LineCollapser, NoLineWaitsPastTheWindowAndTheWaitingAreBounded) {
  LineCollapser c(100ms);
  c.add(0, OutputStream::Stdout, "first", t0);
  c.add(1, OutputStream::Stdout, "second", t0 + 80ms);
  EXPECT_EQ(c.next_due(), t0 + 100ms);
  EXPECT_EQ(shown(c.due(t0 + 100ms)), (std::vector<std::string>{"[rank 0] first"}));
  EXPECT_EQ(c.next_due(), t0 + 180ms);
  LineCollapser full(100ms);
  std::size_t out = 0;
  for (std::size_t i = 0; i < LineCollapser::kMaxWaiting + 10; ++i)
    out += full.add(0, OutputStream::Stdout, "line " + std::to_string(i), t0).size();
  EXPECT_EQ(out, 10u) << "past the bound the oldest go out at once";
}

TEST(LineCollapser, ARanksLinesGoOutBeforeWhatIsSaidAboutIt) {
  LineCollapser c(150ms);
  c.add(0, OutputStream::Stdout, "a", t0);
  c.add(1, OutputStream::Stdout, "b", t0);
  c.add(2, OutputStream::Stdout, "c", t0);
  EXPECT_EQ(shown(c.flush_through(1)), (std::vector<std::string>{"[rank 0] a", "[rank 1] b"}));
  EXPECT_EQ(shown(c.flush()), (std::vector<std::string>{"[rank 2] c"}));
  EXPECT_EQ(collapsed_prefix(1, 2, {4, 5, 7}), "[node 1 ranks 4-5,7]");
}

}  // namespace
}  // namespace ddplaunch
