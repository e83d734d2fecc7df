// The period of a node's rank reports; see rank_report_period.h.
#include "policy/rank_report_period.h"

#include <algorithm>

#include "policy/straggler_watch.h"

namespace ddplaunch {

std::chrono::milliseconds longest_rank_report_period(double suspect_floor_s) {
  using std::chrono::milliseconds;
  const milliseconds straggler_bound = std::chrono::duration_cast<milliseconds>(StragglerSettings{}.window) / 2;
  const milliseconds hang_bound{static_cast<long long>(std::max(suspect_floor_s, 0.0) * 1000.0 / 4.0)};
  return std::max(kRankReportBasePeriod, std::min(straggler_bound, hang_bound));
}

std::chrono::milliseconds rank_report_period(std::size_t nodes, double suspect_floor_s) {
  const std::chrono::milliseconds by_budget{static_cast<long long>(nodes * 1000 / kRankReportBudgetPerS)};
  return std::clamp(by_budget, kRankReportBasePeriod, longest_rank_report_period(suspect_floor_s));
}

}  // namespace ddplaunch
