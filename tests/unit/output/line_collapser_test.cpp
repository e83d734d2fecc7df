// LineCollapser driven with explicit times: identical lines of several ranks merge within the
// window, a differing line is its own, no line waits past the window, each rank keeps its order.
#include <gtest/gtest.h>

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

// A rank printing the same line twice gets two lines; and a waiting line cannot move behind a
// newcomer's earlier line when one of its own ranks has a line behind it (that would reorder
// that rank): the newcomer's line is then its own.
TEST(LineCollapser, ARankNeverJoinsItselfNorReordersAnother) {
  LineCollapser c(150ms);
  c.add(0, OutputStream::Stdout, "tick", t0);
  c.add(0, OutputStream::Stdout, "tick", t0);
  c.add(0, OutputStream::Stdout, "after", t0);
  c.add(1, OutputStream::Stdout, "own line", t0);
  c.add(1, OutputStream::Stdout, "tick", t0);
  EXPECT_EQ(shown(c.flush()), (std::vector<std::string>{"[rank 0] tick", "[rank 0] tick", "[rank 0] after",
                                                        "[rank 1] own line", "[rank 1] tick"}));
  // Without a line of its own waiting, a newcomer joins the earliest identical line it may.
  c.add(0, OutputStream::Stdout, "tick", t0);
  c.add(0, OutputStream::Stdout, "tick", t0);
  c.add(1, OutputStream::Stdout, "tick", t0);
  c.add(1, OutputStream::Stdout, "tick", t0);
  EXPECT_EQ(shown(c.flush()), (std::vector<std::string>{"[ranks 0-1] tick", "[ranks 0-1] tick"}));
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
