// InitDeadline driven directly: its value per generation (the formula, grown by init-failure
// restarts, the dedicated-NIC allowance), the raise to what history asks for (capped by
// timeout.max_s), and its numbered armings. Pure.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "policy/init_deadline.h"

namespace {

using namespace ddplaunch;

// 10 s flat: base 10, nothing per node or per RTT, min 10; dedicated NIC adds 10; 1.5x a restart.
InitDeadlineSettings flat_ten() {
  InitDeadlineSettings s;
  s.formula.base_s = 10;
  s.formula.min_s = 10;
  s.formula.per_node_s = 0;
  s.formula.rtt_factor = 0;
  s.formula.dedicated_nic_s = 10;
  s.formula.restart_factor = 1.5;
  s.formula.max_s = 60;
  return s;
}

std::vector<rendezvous::NodeRecord> nodes(int count, std::string ifname = "") {
  std::vector<rendezvous::NodeRecord> out(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    out[static_cast<std::size_t>(i)].node_rank = i;
    out[static_cast<std::size_t>(i)].facts.socket_ifname = ifname;
  }
  return out;
}

TEST(InitDeadline, TheFormulaGrowsWithEachInitFailureRestart) {
  InitDeadline deadline(flat_ten());
  deadline.plan(nodes(2), 0);
  EXPECT_DOUBLE_EQ(deadline.seconds(), 10);
  EXPECT_NE(deadline.explained().find("= 10 s (max 60 s)"), std::string::npos) << deadline.explained();
  deadline.plan(nodes(2), 2);
  EXPECT_DOUBLE_EQ(deadline.seconds(), 22.5);
}

TEST(InitDeadline, EveryNodeOnAChosenInterfaceAddsTheDedicatedNicAllowanceButNotForDoctor) {
  InitDeadline deadline(flat_ten());
  deadline.plan(nodes(2, "eth1"), 0);
  EXPECT_DOUBLE_EQ(deadline.seconds(), 20);
  deadline.plan(nodes(1, "eth1"), 0);  // one node talks to nobody
  EXPECT_DOUBLE_EQ(deadline.seconds(), 10);
  InitDeadlineSettings doctor = flat_ten();
  doctor.doctor = true;
  InitDeadline checks(doctor);
  checks.plan(nodes(2, "eth1"), 0);
  EXPECT_DOUBLE_EQ(checks.seconds(), 10);
}

// History of `history_s` on the flat 10 s formula (max 60 s): the deadline and its words.
struct HistoryCase {
  double history_s;
  double seconds;
  std::string said;
};

TEST(InitDeadline, HistoryRaisesItNeverPastTimeoutMaxAndIsAlwaysMentioned) {
  const HistoryCase cases[] = {
      {40, 40, "; raised to 40 s from history (p99 of 5 runs)"},
      {600, 60, "; raised to 60 s from history, capped by timeout.max_s 60 s (p99 of 5 runs)"},
      {5, 10, "; history asks for 5.0 s (p99 of 5 runs)"},  // shorter: the formula stays
  };
  for (const HistoryCase& c : cases) {
    InitDeadlineSettings s = flat_ten();
    s.history_init_s = c.history_s;
    s.history_explained = "p99 of 5 runs";
    InitDeadline deadline(s);
    deadline.plan(nodes(2), 0);
    EXPECT_DOUBLE_EQ(deadline.seconds(), c.seconds) << c.history_s;
    EXPECT_NE(deadline.explained().find(c.said), std::string::npos) << deadline.explained();
  }
}

TEST(InitDeadline, EachArmingIsNumberedAndOnlyTheCurrentOneFires) {
  InitDeadline deadline(flat_ten());
  deadline.plan(nodes(2), 0);
  EXPECT_FALSE(deadline.recheck(false, Generation{0}));  // not running: nothing to arm
  auto first = deadline.recheck(true, Generation{0});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->generation, Generation{0});
  EXPECT_DOUBLE_EQ(first->seconds, 10);
  EXPECT_FALSE(deadline.recheck(true, Generation{0}));  // armed already
  EXPECT_TRUE(deadline.fired(first->serial));
  EXPECT_FALSE(deadline.recheck(false, Generation{0}));  // suspended (a rank in a debugger)
  EXPECT_FALSE(deadline.fired(first->serial));
  auto second = deadline.recheck(true, Generation{0});  // armed afresh, with its whole length
  ASSERT_TRUE(second);
  EXPECT_GT(second->serial, first->serial);
  EXPECT_FALSE(deadline.fired(first->serial));
  EXPECT_TRUE(deadline.fired(second->serial));
}

TEST(InitDeadline, ANewGenerationDisarmsItAndAnotherCoordinatorsArmingsAreForgotten) {
  InitDeadline deadline(flat_ten());
  deadline.plan(nodes(2), 0);
  auto armed = deadline.recheck(true, Generation{0});
  ASSERT_TRUE(armed);
  deadline.plan(nodes(2), 1);
  EXPECT_FALSE(deadline.fired(armed->serial));
  auto again = deadline.recheck(true, Generation{1});
  ASSERT_TRUE(again);
  deadline.forget_armings();
  EXPECT_FALSE(deadline.fired(again->serial));
  auto after = deadline.recheck(true, Generation{1});
  ASSERT_TRUE(after);
  EXPECT_GT(after->serial, again->serial + 1);  // the forgotten serial is never used again
}

}  // namespace
