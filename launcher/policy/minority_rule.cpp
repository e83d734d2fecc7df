// MinorityRule: see minority_rule.h.
#include "policy/minority_rule.h"

#include <algorithm>

#include <fmt/format.h>

namespace ddplaunch {

std::optional<std::string> MinorityRule::check(bool etcd_unreachable, std::size_t joined, PolicyClock::time_point now) {
  most_launchers_ = std::max(most_launchers_, joined);
  const bool minority = etcd_unreachable && most_launchers_ > 1 && joined * 2 <= most_launchers_;
  if (!minority_.observe(minority, now)) return std::nullopt;
  return fmt::format("this coordinator reaches neither etcd nor most of the job's launchers ({} of {} still joined): "
                     "it is on the minority side of a partition",
                     joined, most_launchers_);
}

}  // namespace ddplaunch
