// The period of a node's rank reports; see rank_report_period.h.
#include "policy/rank_report_period.h"

#include <algorithm>

namespace ddplaunch {

std::chrono::milliseconds rank_report_period(std::size_t nodes) {
  const std::chrono::milliseconds paced{static_cast<long long>(nodes * 1000 * 7 / (8 * kRestBudgetPerS))};
  return std::clamp(paced, kRankReportBasePeriod, kRankReportLongestPeriod);
}

std::chrono::milliseconds report_delay_on_grid(std::chrono::milliseconds wall_now, std::chrono::milliseconds after,
                                               std::chrono::milliseconds period) {
  using std::chrono::milliseconds;
  const milliseconds grid = std::max(milliseconds(1), std::min(milliseconds(1000), period / 8));
  const milliseconds target = wall_now + std::max(after, milliseconds(0));
  const milliseconds nearest = (target + grid / 2) / grid * grid;
  return std::max(nearest - wall_now, milliseconds(0));
}

}  // namespace ddplaunch
