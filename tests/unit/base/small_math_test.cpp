// base/small_math.h: the launcher's libm-free std::round and integer std::pow agree with
// <cmath> (the launcher links no libm).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ddplaunch/base/small_math.h"

namespace {

using namespace ddplaunch;

TEST(SmallMath, RoundHalfAwayIsStdRound) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values = {0.0, -0.0, 0.49999999999999994, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999999999999996,
                                123.45, 599.5, 7199.5, 1e15 + 0.5, 4503599627370495.5, 4503599627370496.0,
                                9007199254740993.0, 1e300, -1e300, inf, -inf, std::numeric_limits<double>::denorm_min()};
  for (int i = -2000; i <= 2000; ++i) values.push_back(i / 8.0 + (i % 3) * 1e-9);
  for (double v : values) EXPECT_EQ(round_half_away(v), std::round(v)) << v;
  EXPECT_TRUE(std::isnan(round_half_away(std::numeric_limits<double>::quiet_NaN())));
}

TEST(SmallMath, IntegerPowerIsStdPow) {
  for (int n = -1080; n <= 1030; ++n) EXPECT_EQ(integer_power(2.0, n), std::pow(2.0, n)) << "2^" << n;  // exact
  for (double base : {1.0, 1.5, 1.1, 1.25, 3.0, 0.5, 10.0})
    for (int n = 0; n <= 30; ++n) {
      const double want = std::pow(base, n);
      EXPECT_NEAR(integer_power(base, n), want, std::abs(want) * 1e-15) << base << "^" << n;
    }
}

}  // namespace
