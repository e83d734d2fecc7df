// The init deadline's formula, its validation and its human-readable explanation.
#include "policy/init_deadline_formula.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ddplaunch/base/small_math.h"

namespace ddplaunch {
namespace {

std::string num(double v) {  // shortest readable: 30, 0.4, 135.9
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

double raw_init_deadline(const InitDeadlineFormula& p, const InitDeadlineInputs& in) {
  return p.base_s + p.per_node_s * std::max(in.nodes, 0) + (in.dedicated_nic ? p.dedicated_nic_s : 0.0) +
         p.rtt_factor * std::max(in.rtt_ms, 0.0) / 1000.0;
}

}  // namespace

preflight::CheckOutcome validate(const InitDeadlineFormula& p) {
  using preflight::CheckOutcome;
  const std::pair<const char*, double> fields[] = {
      {"base_s", p.base_s}, {"per_node_s", p.per_node_s}, {"dedicated_nic_s", p.dedicated_nic_s},
      {"rtt_factor", p.rtt_factor}, {"min_s", p.min_s}, {"max_s", p.max_s}, {"restart_factor", p.restart_factor}};
  for (const auto& [name, value] : fields) {
    if (!std::isfinite(value) || value < 0) {
      return CheckOutcome::fail(std::string("timeout policy: ") + name + " = " + num(value) +
                                " is invalid; it must be a finite number >= 0");
    }
  }
  if (p.max_s <= 0) return CheckOutcome::fail("timeout policy: max_s must be above 0 seconds");
  if (p.min_s > p.max_s) {
    return CheckOutcome::fail("timeout policy: min_s = " + num(p.min_s) + " is above max_s = " + num(p.max_s) +
                              "; lower min_s or raise max_s");
  }
  if (p.restart_factor < 1) {
    return CheckOutcome::fail("timeout policy: restart_factor = " + num(p.restart_factor) +
                              " would shrink the timeout on each restart; use 1 (constant) or more");
  }
  return CheckOutcome::pass();
}

InitDeadlineValue apply_init_deadline_formula(const InitDeadlineFormula& p, const InitDeadlineInputs& in) {
  const double raw = raw_init_deadline(p, in);
  const int restarts = std::max(in.init_failure_restarts, 0);
  InitDeadlineValue value;
  value.seconds = std::min(std::clamp(raw, p.min_s, p.max_s) * integer_power(p.restart_factor, restarts), p.max_s);
  std::string& s = value.explained;
  s = "timeout = clamp(" + num(p.base_s) + " + " + num(p.per_node_s) + " s x " + std::to_string(std::max(in.nodes, 0)) +
      " nodes";
  s += in.dedicated_nic ? " + " + num(p.dedicated_nic_s) + " s dedicated NIC" : std::string(" + 0 (no dedicated NIC)");
  s += " + " + num(p.rtt_factor) + " x " + num(std::max(in.rtt_ms, 0.0)) + " ms RTT / 1000 = " + num(raw) + " s, " +
       num(p.min_s) + ", " + num(p.max_s) + ")";
  if (restarts > 0)
    s += " x " + num(p.restart_factor) + "^" + std::to_string(restarts) + " (restart " + std::to_string(restarts) + ")";
  s += " = " + num(value.seconds) + " s (max " + num(p.max_s) + " s)";
  return value;
}

}  // namespace ddplaunch
