// The few functions of <cmath> the launcher needs that live in libm, written here: the
// launcher links no libm, whose loading would cost every start ~10 page faults. And the median
// the launcher's comparisons of ranks and nodes share.
#pragma once

#include <algorithm>
#include <vector>

namespace ddplaunch {

// std::round: to the nearest integer, halfway cases away from zero.
constexpr double round_half_away(double v) {
  if (!(v > -4503599627370496.0 && v < 4503599627370496.0)) return v;  // |v| >= 2^52, inf, nan: already integral
  const double truncated = static_cast<double>(static_cast<long long>(v));
  const double rest = v - truncated;  // exact below 2^52
  if (rest >= 0.5) return truncated + 1;
  if (rest <= -0.5) return truncated - 1;
  return truncated;
}

// std::pow(base, exponent) for an integer exponent: exact for powers of two; otherwise the
// product carried in long double and rounded once.
constexpr double integer_power(double base, int exponent) {
  long double result = 1, factor = base;
  for (unsigned n = exponent < 0 ? 0U - static_cast<unsigned>(exponent) : static_cast<unsigned>(exponent); n != 0;
       n >>= 1) {
    if (n & 1U) result *= factor;
    factor *= factor;
  }
  return static_cast<double>(exponent < 0 ? 1 / result : result);
}

// The middle value (the mean of the two middle ones for an even count); 0 for none.
inline double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

}  // namespace ddplaunch
