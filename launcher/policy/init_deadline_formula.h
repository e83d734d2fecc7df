// The formula of the group's init deadline (the timeout.* keys; DDPLAUNCH_TIMEOUT_S in every
// worker), from the cluster's size, NIC setup and measured RTT, grown on each restart after an
// init failure. The policy's InitDeadline applies it each generation.
//
//   raw     = base_s + per_node_s * nodes + (dedicated_nic ? dedicated_nic_s : 0)
//             + rtt_factor * rtt_ms / 1000
//   timeout = min( clamp(raw, min_s, max_s) * restart_factor ^ generation, max_s )
//
// Defaults: 4 nodes, dedicated NIC, 2 ms RTT, generation 0 -> 30 + 20 + 10 + 0.4 = 60.4 s;
// generation 2 -> 60.4 * 1.5^2 = 135.9 s. Negative nodes / rtt / generation count as 0.
#pragma once

#include <string>

#include "ddplaunch/preflight/outcome.h"

namespace ddplaunch::preflight {

struct InitDeadlineFormula {
  double base_s = 30;
  double per_node_s = 5;
  double dedicated_nic_s = 10;
  double rtt_factor = 200;  // seconds of timeout per second of measured RTT; 1 ms RTT adds 0.2 s
  double min_s = 30;
  double max_s = 1800;
  double restart_factor = 1.5;
};

// Fails for a negative or non-finite field, min_s > max_s, max_s == 0, or restart_factor < 1;
// the message names the field and its value.
CheckOutcome validate(const InitDeadlineFormula& formula);

// Seconds; see the formula above. Assumes validate(formula) passed.
double compute_init_deadline(const InitDeadlineFormula& formula, int nodes, bool dedicated_nic, double rtt_ms,
                             int generation);

// The formula with the numbers plugged in, one line, for --dry-run and doctor, e.g.
// "timeout = clamp(30 + 5 s x 4 nodes + 10 s dedicated NIC + 200 x 2 ms RTT / 1000 = 60.4 s,
//  30, 1800) x 1.5^2 (restart 2) = 135.9 s (max 1800 s)".
std::string explain_init_deadline(const InitDeadlineFormula& formula, int nodes, bool dedicated_nic, double rtt_ms,
                                  int generation);

}  // namespace ddplaunch::preflight
