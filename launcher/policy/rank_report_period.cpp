// The period of a node's rank reports; see rank_report_period.h.
#include "policy/rank_report_period.h"

#include <algorithm>

namespace ddplaunch {

std::chrono::milliseconds rank_report_period(std::size_t nodes) {
  const std::chrono::milliseconds paced{static_cast<long long>(nodes * 1000 * 7 / (8 * kRestBudgetPerS))};
  return std::clamp(paced, kRankReportBasePeriod, kRankReportLongestPeriod);
}

}  // namespace ddplaunch
