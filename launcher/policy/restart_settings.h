// The policy's knobs that the config fills: the restart budgets and the init-deadline
// formula. Here, under the policy, so that the policy never includes the whole LaunchConfig
// (config → policy, never back).
#pragma once

#include "policy/init_deadline_formula.h"

namespace ddplaunch {

// Two budgets (torchrun's --max-restarts meaning plus ddplaunch's automatic init retries):
// an init failure spends init_restarts first, then max_restarts; any other failure spends
// max_restarts only.
struct RestartSettings {
  int max_restarts = 0;            // torchrun's --max-restarts: restarts after ANY failure
  int init_restarts = 3;           // automatic restarts after init failures, even at max_restarts 0
  bool on_init_failure = true;     // restart_on: [init]
  bool on_runtime_failure = true;  // restart_on: [init, runtime] (runtime still needs max_restarts > 0)
  double backoff_s = 0.0;          // wait before restart n: backoff_s * 2^(n-1), plus jitter
  double backoff_max_s = 30.0;
  double jitter = 0.1;             // fraction of the backoff added at random
};

}  // namespace ddplaunch
