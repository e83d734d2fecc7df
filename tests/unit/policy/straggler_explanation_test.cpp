// Which of a straggler's node's signals are said: only those past their threshold and above
// what the other nodes see, worded for a person.
#include <gtest/gtest.h>

#include "policy/straggler_explanation.h"

namespace ddplaunch {
namespace {

NodeSignals quiet() {
  NodeSignals s;
  s.steal = 0.0;
  s.cpu_pressure = 0.02;
  s.memory_pressure = 0.0;
  s.io_pressure = 0.01;
  return s;
}

TEST(StragglerExplanation, AStarvedRankInAThrottledCgroupIsSaidWithEachSignalThatStandsOut) {
  NodeSignals starved = quiet();
  starved.throttled = 0.92;
  starved.throttled_cgroup = "/batch/job7";
  starved.cpu_pressure = 0.81;
  const auto said = straggler_signals(1, 0.05, starved, {quiet()});
  ASSERT_EQ(said.size(), 3u);
  EXPECT_EQ(said[0], "rank 1 got 0.05 of a core");
  EXPECT_EQ(said[1], "cgroup /batch/job7 throttled in 92 % of its CPU periods");
  EXPECT_EQ(said[2], "cpu pressure 81 %");
  EXPECT_EQ(signals_text(1, said),
            "node 1: rank 1 got 0.05 of a core; cgroup /batch/job7 throttled in 92 % of its CPU periods; cpu pressure 81 %");
}

TEST(StragglerExplanation, StealAndMemoryAndIoPressureAreSaidPastTheirThresholds) {
  NodeSignals noisy = quiet();
  noisy.steal = 0.14;
  noisy.memory_pressure = 0.12;
  noisy.io_pressure = 0.35;
  const auto said = straggler_signals(5, 0.98, noisy, {quiet(), quiet()});
  EXPECT_EQ(said, (std::vector<std::string>{"CPU steal 14 %", "memory pressure 12 %", "io pressure 35 %"}));
}

TEST(StragglerExplanation, NothingIsSaidBelowTheThresholdsOrWithoutFigures) {
  NodeSignals mild = quiet();
  mild.steal = 0.05;
  mild.throttled = 0.10;
  mild.throttled_cgroup = "/a";
  mild.cpu_pressure = 0.15;
  mild.memory_pressure = 0.05;
  EXPECT_TRUE(straggler_signals(0, 0.9, mild, {quiet()}).empty());
  EXPECT_TRUE(straggler_signals(0, std::nullopt, NodeSignals{}, {}).empty());
  EXPECT_EQ(signals_text(0, {}), "");
}

// Two nodes on one host see the same pressure: it explains nothing about one of them.
TEST(StragglerExplanation, ANodeWideFigureTheOtherNodesShareIsNotSaid) {
  NodeSignals busy = quiet();
  busy.cpu_pressure = 0.60;
  busy.steal = 0.20;
  NodeSignals also_busy = busy;
  also_busy.cpu_pressure = 0.55;
  also_busy.steal = 0.18;
  EXPECT_EQ(straggler_signals(1, 0.05, busy, {also_busy}), (std::vector<std::string>{"rank 1 got 0.05 of a core"}));
  // Half the threshold above the others' median is enough: 0.45 against 0.30 (threshold 0.20).
  also_busy.cpu_pressure = 0.30;
  busy.cpu_pressure = 0.45;
  EXPECT_EQ(straggler_signals(1, 0.9, busy, {also_busy}), (std::vector<std::string>{"cpu pressure 45 %"}));
  // A node alone (no other reported it) is compared with nothing.
  EXPECT_EQ(straggler_signals(1, 0.9, busy, {NodeSignals{}}),
            (std::vector<std::string>{"CPU steal 20 %", "cpu pressure 45 %"}));
}

TEST(StragglerExplanation, ARankWithHalfACoreOrMoreIsNotCalledStarved) {
  EXPECT_TRUE(straggler_signals(2, 0.5, quiet(), {}).empty());
  EXPECT_TRUE(straggler_signals(2, 1.7, quiet(), {}).empty());
  EXPECT_EQ(straggler_signals(2, 0.0, quiet(), {}), (std::vector<std::string>{"rank 2 got 0.00 of a core"}));
}

}  // namespace
}  // namespace ddplaunch
