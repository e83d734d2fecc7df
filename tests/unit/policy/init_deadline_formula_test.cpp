// The init deadline's formula with numbers, its clamps, growth with init-failure restarts,
// validation and explanation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "policy/init_deadline_formula.h"

using namespace ddplaunch;

namespace {

// The deadline for `nodes`, with or without a dedicated NIC, after `restarts` init-failure restarts.
double seconds(const InitDeadlineFormula& formula, int nodes, bool dedicated_nic, double rtt_ms, int restarts) {
  return apply_init_deadline_formula(formula, {nodes, dedicated_nic, rtt_ms, restarts}).seconds;
}
std::string explained(const InitDeadlineFormula& formula, int nodes, bool dedicated_nic, double rtt_ms, int restarts) {
  return apply_init_deadline_formula(formula, {nodes, dedicated_nic, rtt_ms, restarts}).explained;
}

}  // namespace

TEST(InitDeadlineFormula, FormulaWithNumbers) {
  InitDeadlineFormula p;
  // 30 + 5*4 + 10 + 200*2/1000 = 60.4
  EXPECT_NEAR(seconds(p, 4, true, 2.0, 0), 60.4, 1e-9);
  // no dedicated NIC, 1 ms RTT adds 0.2 s: 30 + 5*10 + 0.2 = 80.2
  EXPECT_NEAR(seconds(p, 10, false, 1.0, 0), 80.2, 1e-9);
}

TEST(InitDeadlineFormula, ClampedToMinAndMax) {
  InitDeadlineFormula p;
  p.base_s = 0;
  EXPECT_NEAR(seconds(p, 1, false, 0, 0), 30.0, 1e-9);  // 5 -> min 30
  InitDeadlineFormula q;
  EXPECT_NEAR(seconds(q, 1000, true, 0, 0), 1800.0, 1e-9);  // 5040 -> max 1800
  EXPECT_NEAR(seconds(q, 4, true, -5, -1), 60.0, 1e-9);      // negatives count as 0
}

TEST(InitDeadlineFormula, RestartBackoffGrowsAndIsReclamped) {
  InitDeadlineFormula p;
  EXPECT_NEAR(seconds(p, 4, true, 2.0, 1), 60.4 * 1.5, 1e-9);
  EXPECT_NEAR(seconds(p, 4, true, 2.0, 2), 60.4 * 2.25, 1e-9);  // 135.9
  EXPECT_NEAR(seconds(p, 4, true, 2.0, 20), 1800.0, 1e-9);
  // min-clamped value grows too: 30 * 1.5^3 = 101.25
  EXPECT_NEAR(seconds(p, 0, false, 0, 3), 101.25, 1e-9);
}

TEST(InitDeadlineFormula, Validation) {
  EXPECT_TRUE(validate(InitDeadlineFormula{}).ok);
  InitDeadlineFormula neg;
  neg.per_node_s = -1;
  auto r = validate(neg);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("per_node_s = -1"), std::string::npos) << r.message;
  InitDeadlineFormula inverted;
  inverted.min_s = 100;
  inverted.max_s = 50;
  r = validate(inverted);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("min_s = 100 is above max_s = 50"), std::string::npos) << r.message;
  InitDeadlineFormula shrinking;
  shrinking.restart_factor = 0.5;
  r = validate(shrinking);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("restart_factor = 0.5"), std::string::npos) << r.message;
  InitDeadlineFormula nan;
  nan.base_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(validate(nan).ok);
  InitDeadlineFormula one;
  one.restart_factor = 1;
  EXPECT_TRUE(validate(one).ok);
}

TEST(InitDeadlineFormula, ExplanationShowsTheNumbers) {
  InitDeadlineFormula p;
  EXPECT_EQ(explained(p, 4, true, 2.0, 2),
            "timeout = clamp(30 + 5 s x 4 nodes + 10 s dedicated NIC + 200 x 2 ms RTT / 1000 = 60.4 s, "
            "30, 1800) x 1.5^2 (restart 2) = 135.9 s (max 1800 s)");
  std::string first = explained(p, 2, false, 0.5, 0);
  EXPECT_NE(first.find("+ 0 (no dedicated NIC)"), std::string::npos) << first;
  EXPECT_EQ(first.find("restart"), std::string::npos) << first;
  EXPECT_NE(first.find("= 40.1 s"), std::string::npos) << first;
}
