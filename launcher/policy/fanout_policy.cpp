// The fan-out's rules (see fanout_policy.h).
#include "policy/fanout_policy.h"

#include "ddplaunch/base/exit_codes.h"

namespace ddplaunch {

namespace {
constexpr int kSshFailed = 255;
// How long the other nodes may take to end by themselves after one ended badly, and how long
// past the grace a stopped node may take.
constexpr std::chrono::seconds kSettle(5);
constexpr double kStopBoundS = 15;
}  // namespace

bool ssh_session_failed(const ExitStatus& status) { return status.signaled || status.code == kSshFailed; }

FanoutEndDecision decide_fanout_node_end(const FanoutNodeEnded& e) {
  FanoutEndDecision d;
  const bool ssh_failed = ssh_session_failed(e.status);
  if (e.node == 0) d.job_exit_code = ssh_failed ? kExitFailure : e.status.shell_code();
  if (ssh_failed) d.say = FanoutEndDecision::Say::Error;
  else if (!e.status.success() && !e.stopping) d.say = FanoutEndDecision::Say::Info;
  if (!e.status.success() && !e.stopping && e.still_running > 0) d.stop_others_after = kSettle;
  return d;
}

int fanout_exit_code(std::optional<int> master_code) { return master_code.value_or(kExitFailure); }

double fanout_stop_bound_s(double grace_s) { return grace_s + kStopBoundS; }

}  // namespace ddplaunch
