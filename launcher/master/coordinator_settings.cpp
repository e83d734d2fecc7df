// The job policy's settings, from the launch configuration and the run history.
#include "master/coordinator_settings.h"

#include <sys/random.h>
#include <unistd.h>

#include <ctime>

#include "master/hang_investigation.h"
#include "history/run_history.h"
#include "policy/job_policy.h"

namespace ddplaunch {

PolicySettings policy_settings(const CoordinatorSettings& s, const HistorySeed& seed) {
  PolicySettings p;
  p.restart = s.config.restart;
  p.init_deadline = s.config.init_deadline;
  p.setup_timeout_s = s.config.setup_timeout_s;
  p.worker_port_auto = s.config.worker_port.automatic();
  p.worker_master_addr = s.worker_master_addr;
  p.master_is_loopback = s.master_is_loopback;
  p.refuse_version_mismatch = s.config.version_mismatch == VersionMismatch::Refuse;
  p.doctor = s.doctor;
  if (s.doctor) p.doctor_host_record = doctor_host_record(s);
  // getrandom, not std::random_device (glibc 2.36 once libstdc++ is static: see new_job_tag).
  if (::getrandom(&p.random_seed, sizeof p.random_seed, 0) != static_cast<ssize_t>(sizeof p.random_seed))
    p.random_seed = static_cast<decltype(p.random_seed)>(::getpid()) ^ static_cast<decltype(p.random_seed)>(::time(nullptr));
  p.membership = membership_enabled(s.config);
  const MembershipConfig& m = s.config.membership;
  p.membership_settings = MembershipSettings{min_nodes(s.config), s.config.nodes, m.spares, m.last_call_s,
                                             m.below_min_wait_s, m.exclude_after, m.exclude_cooldown_s, m.max_changes,
                                             /*reserve_hosts: from the history, below*/ {}};
  p.hang_action = resolve_hang_action(s.config.hang_action, s.config.restart);
  p.straggler_action = s.config.straggler_action;
  p.straggler_swap_after_s = s.config.straggler_swap_after_s;
  apply_history_seed(seed, p);
  return p;
}

}  // namespace ddplaunch
