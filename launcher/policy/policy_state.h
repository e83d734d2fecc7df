// The job policy's state as a document: when the coordinator moves to another
// launcher (etcd failover), the new one restores the old one's JobPolicy and goes on from it
// (JobPolicy::save_state / restore_state). Pure: text in, text out; storing it is the caller's.
//
// The document (JSON) holds every field of JobPolicy and of its parts: phase, generation, the
// nodes with their join facts, each node's and each rank's state, the restart budgets spent,
// the failures remembered, the init deadline's serial, the peer probe's round, doctor's rows,
// membership's members, timers and cooldowns, and the random engine of the backoff jitter (so
// the next delay is the one the old coordinator would have drawn). Not the settings: the new
// coordinator has its own from its command line; only a fingerprint of those that must agree
// (restart budgets, membership MIN:MAX and spares) is saved, and a restore under others is
// refused. Nor the timers the shell armed (backoff, init deadline): the policy never knew when
// they fire; the new shell arms its own. Of the master's hang watch (HangInvestigation holds it)
// only the largest step interval it learnt (CarriedState: the shell hands it to each save, the
// restore hands it back; the policy holds it not), which the new coordinator seeds its own with; not
// the sections' longest times nor the ranks' clocks (a takeover starts a new generation).
// Carried as they are, though they are the old coordinator's words: the rendezvous port (the
// shell sets its own again) and the member ids (the rendezvous server's ids for launchers'
// connections: they mean the same only if they survive the move, e.g. as etcd registrations).
//
// Time points are steady-clock values, meaningless on another machine: each is saved as
// milliseconds from the save's `now` (negative for the past) and re-based on the restore's
// `now`, so a deadline 3 s ahead at the save is 3 s ahead at the restore. The time the
// failover itself took is the caller's to account for (pass a later `now` to count it).
#pragma once

#include <string>

#include "policy/job_policy.h"

namespace ddplaunch {

// Raised whenever a field changes meaning or a document of the old version could not be read;
// a restore refuses any other version.
// Version 2: the hang watch's learnt step interval (learnt_step_interval_s).
// Version 3: a failure report's log file (failures' log_file).
inline constexpr int kPolicyStateVersion = 3;

// The settings two coordinators must share for a saved state to mean the same thing, for
// people: "init_restarts 3, max_restarts 0, membership off".
std::string policy_settings_fingerprint(const PolicySettings& settings);

}  // namespace ddplaunch
