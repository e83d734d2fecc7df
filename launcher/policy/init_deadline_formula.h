// The formula of the group's init deadline (the timeout.* keys; DDPLAUNCH_TIMEOUT_S in every
// worker), from the cluster's size, NIC setup and measured RTT, grown on each restart after an
// init failure. InitDeadline (init_deadline.h) applies it each generation; --dry-run applies
// it to the job as planned before any node is probed. Pure.
//
//   raw     = base_s + per_node_s * nodes + (dedicated_nic ? dedicated_nic_s : 0)
//             + rtt_factor * rtt_ms / 1000
//   timeout = min( clamp(raw, min_s, max_s) * restart_factor ^ init_failure_restarts, max_s )
//
// Defaults: 4 nodes, dedicated NIC, 2 ms RTT, no restart -> 30 + 20 + 10 + 0.4 = 60.4 s;
// after 2 init-failure restarts -> 60.4 * 1.5^2 = 135.9 s. Negative nodes / rtt / restarts
// count as 0.
#pragma once

#include <string>

#include "ddplaunch/preflight/outcome.h"

namespace ddplaunch {

struct InitDeadlineFormula {
  double base_s = 30;
  double per_node_s = 5;
  double dedicated_nic_s = 10;
  double rtt_factor = 200;  // seconds of timeout per second of measured RTT; 1 ms RTT adds 0.2 s
  double min_s = 30;
  double max_s = 1800;
  double restart_factor = 1.5;
};

// What the formula is applied to: one generation of the cluster. Before any node was probed
// (--dry-run) only the node count is known: no dedicated-NIC allowance, no RTT.
struct InitDeadlineInputs {
  int nodes = 0;
  bool dedicated_nic = false;     // every node's user chose a socket interface
  double rtt_ms = 0;              // the largest RTT the nodes measured
  int init_failure_restarts = 0;  // restarts so far after an init failure: each grows the deadline
};

struct InitDeadlineValue {
  double seconds = 0;
  // The formula with the numbers plugged in, one line, e.g. "timeout = clamp(30 + 5 s x 4
  // nodes + 10 s dedicated NIC + 200 x 2 ms RTT / 1000 = 60.4 s, 30, 1800) x 1.5^2
  // (restart 2) = 135.9 s (max 1800 s)".
  std::string explained;
};

// Fails for a negative or non-finite field, min_s > max_s, max_s == 0, or restart_factor < 1;
// the message names the field and its value.
preflight::CheckOutcome validate(const InitDeadlineFormula& formula);

// The deadline and how it was reached; see the formula above. Assumes validate(formula) passed.
InitDeadlineValue apply_init_deadline_formula(const InitDeadlineFormula& formula, const InitDeadlineInputs& inputs);

}  // namespace ddplaunch
