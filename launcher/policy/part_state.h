// The classes the job policy is made of — rank phases, the peer probe's round, membership,
// the restart budget, the init deadline, the planned nodes, the failures, init's progress —
// field by field, for the state document (policy_state.h). Each befriends its StateFields.
// The tracker, the probe and membership are objects of the document; the others' fields sit
// at its top level, beside JobPolicy's own, under the names they had before they were parts.
#pragma once

#include "policy/init_deadline.h"
#include "policy/init_progress.h"
#include "policy/init_tracker.h"
#include "policy/job_failures.h"
#include "policy/membership.h"
#include "policy/planned_nodes.h"
#include "policy/probe_round.h"
#include "policy/restart_budget.h"
#include "policy/record_state.h"

namespace ddplaunch {

template <>
struct StateFields<InitTracker> {
  template <class Io, class Self>
  static void list(Io& io, Self& t) {
    io("ranks", t.ranks_);
  }
};

template <>
struct StateFields<ProbeRound> {
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("active", p.active_);
    io("generation", p.generation_);
    io("started", p.started_);
    io("offers", p.offers_);
    io("reported", p.reported_);
    io("links", p.links_);
  }
};

// Its settings are not saved: the restoring coordinator brings its own (policy_state.h).
template <>
struct StateFields<Membership> {
  template <class Io, class Self>
  static void list(Io& io, Self& m) {
    io("members", m.members_);
    io("started", m.started_);
    io("min_reached_at", m.min_reached_at_);
    io("waiting_until", m.waiting_until_);
    io("reserve_call_from", m.reserve_call_from_);
    io("changes", m.changes_);
    io("cooldowns", m.cooldowns_);
  }
};

// Its settings are not saved: the restoring coordinator brings its own.
template <>
struct StateFields<RestartBudget> {
  template <class Io, class Self>
  static void list(Io& io, Self& b) {
    io("rng", b.rng_);
    io("init_restarts_used", b.init_restarts_used_);
    io("any_restarts_used", b.any_restarts_used_);
    io("init_failure_restarts", b.init_failure_restarts_);
    io("previous_failure", b.previous_failure_);
  }
};

// Its settings are not saved: the restoring coordinator brings its own.
template <>
struct StateFields<InitDeadline> {
  template <class Io, class Self>
  static void list(Io& io, Self& d) {
    io("timeout_s", d.seconds_);
    io("timeout_explained", d.explained_);
    io("deadline_armed", d.armed_);
    io("deadline_serial", d.serial_);
  }
};

template <>
struct StateFields<PlannedNodes> {
  template <class Io, class Self>
  static void list(Io& io, Self& n) {
    io("nodes", n.nodes_);
    io("node_states", n.standings_);
    io("finished_exit_code", n.first_failed_exit_);
  }
};

template <>
struct StateFields<JobFailures> {
  template <class Io, class Self>
  static void list(Io& io, Self& f) {
    io("first_failure", f.first_);
    io("failure_count", f.count_);
    io("last_error_by_node", f.last_error_by_node_);
    io("port_at_fault", f.port_at_fault_);
    io("foreign_store_note", f.foreign_store_note_);
    io("rendezvous_port", f.rendezvous_port_);
  }
};

template <>
struct StateFields<InitProgress> {
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("init_done_announced", p.init_done_announced_);
    io("init_seconds", p.init_seconds_);
    io("generation_started", p.generation_started_);
    io("last_wait_report", p.last_wait_report_);
  }
};

}  // namespace ddplaunch
