// The plain records inside the job policy's state, field by field, and the names of its enums:
// what the state document (policy_state.h) saves of each. A field added to one of these types
// belongs here too, or a new coordinator loses it at failover.
#pragma once

#include "ddplaunch/preflight/ring_plan.h"
#include "ddplaunch/rendezvous/types.h"
#include "policy/failure.h"
#include "policy/init_tracker.h"
#include "policy/job_policy.h"
#include "policy/membership.h"
#include "policy/node_checks.h"
#include "policy/rank_phase.h"
#include "policy/state_io.h"

namespace ddplaunch {

template <>
struct StateNames<JobPhase> : NamedEnum<JobPhase, job_phase_name, job_phase_from_name> {};
template <>
struct StateNames<NodeStanding> : NamedEnum<NodeStanding, node_standing_name, node_standing_from_name> {};
template <>
struct StateNames<MemberRole> : NamedEnum<MemberRole, member_role_name, member_role_from_name> {};
template <>
struct StateNames<RankPhase> : NamedEnum<RankPhase, rank_phase_name, rank_phase_from_name> {};
template <>
struct StateNames<FailurePhase> : NamedEnum<FailurePhase, failure_phase_name, failure_phase_from_name> {};
template <>
struct StateNames<FailureKind> : NamedEnum<FailureKind, failure_kind_name, failure_kind_from_name> {};

// ---- what the nodes said when they joined, and what the peer probe found ------------------

template <>
struct StateFields<rendezvous::NodeFacts> {
  template <class Io, class Self>
  static void list(Io& io, Self& f) {
    io("hostname", f.hostname);
    io("addresses", f.addresses);
    io("requested_node_rank", f.requested_node_rank);
    io("role", f.role);
    io("expected_nodes", f.expected_nodes);
    io("nproc", f.nproc);
    io("gpu_count", f.gpu_count);
    io("launcher_version", f.launcher_version);
    io("program_fingerprint", f.program_fingerprint);
    io("driver_version", f.driver_version);
    io("cuda_version", f.cuda_version);
    io("nccl_version", f.nccl_version);
    io("socket_ifname", f.socket_ifname);
    io("probe_endpoints", f.probe_endpoints);
  }
};

template <>
struct StateFields<rendezvous::NodeRecord> {
  template <class Io, class Self>
  static void list(Io& io, Self& r) {
    io("facts", r.facts);
    io("node_rank", r.node_rank);
    io("member_id", r.member_id);
    io("observed_address", r.observed_address);
    io("rtt_ms", r.rtt_ms);
  }
};

template <>
struct StateFields<preflight::ProbeEndpoint> {
  template <class Io, class Self>
  static void list(Io& io, Self& e) {
    io("ifname", e.ifname);
    io("address", e.address);
    io("port", e.port);
    io("listener_id", e.listener_id);
  }
};

template <>
struct StateFields<preflight::NodeProbeOffer> {
  template <class Io, class Self>
  static void list(Io& io, Self& o) {
    io("node", o.node);
    io("host", o.host);
    io("endpoints", o.endpoints);
  }
};

template <>
struct StateFields<preflight::ProbedLink> {
  template <class Io, class Self>
  static void list(Io& io, Self& l) {
    io("from", l.pair.from);
    io("to", l.pair.to);
    io("ifname", l.ifname);
    io("from_address", l.from_address);
    io("to_endpoint", l.to_endpoint);
    io("ok", l.result.ok);
    io("error", l.result.error);
    io("rtt_ms", l.result.rtt_ms);
    io("mbit_per_s", l.result.mbit_per_s);
    io("seen_as", l.result.seen_as);
  }
};

// ---- ranks and failures -------------------------------------------------------------------

template <>
struct StateFields<RankReport> {
  template <class Io, class Self>
  static void list(Io& io, Self& r) {
    io("rank", r.rank);
    io("pid", r.pid);
    io("phase", r.phase);
    io("init_entries", r.init_entries);
    io("state", r.state);
    io("steps", r.steps);
    io("max_interval_ms", r.max_interval_ms);
    io("progress_age_ms", r.progress_age_ms);
    io("section", r.section);
  }
};

template <>
struct StateFields<TrackedRank> {
  template <class Io, class Self>
  static void list(Io& io, Self& t) {
    io("node", t.node);
    io("last", t.last);
    io("since", t.since);
    io("entered_init", t.entered_init);
  }
};

template <>
struct StateFields<ExitStatus> {
  template <class Io, class Self>
  static void list(Io& io, Self& s) {
    io("signaled", s.signaled);
    io("code", s.code);
    io("signal", s.signal);
    io("core_dumped", s.core_dumped);
  }
};

template <>
struct StateFields<FailureReport> {
  template <class Io, class Self>
  static void list(Io& io, Self& r) {
    io("host", r.host);
    io("node_rank", r.failure.node_rank);
    io("global_rank", r.failure.global_rank);
    io("local_rank", r.failure.local_rank);
    io("pid", r.failure.pid);
    io("phase", r.failure.phase);
    io("kind", r.failure.kind);
    io("status", r.failure.status);
    io("detail", r.failure.detail);
    io("init_signature", r.failure.init_signature);
    io("tail", r.failure.tail);
    io("log_file", r.failure.log_file);
  }
};

template <>
struct StateFields<RememberedFailure> {
  template <class Io, class Self>
  static void list(Io& io, Self& f) {
    io("generation", f.generation);
    io("rank", f.rank);
    io("phase", f.phase);
    io("error", f.error);
  }
};

// ---- doctor and membership ----------------------------------------------------------------

template <>
struct StateFields<DoctorRow> {
  template <class Io, class Self>
  static void list(Io& io, Self& row) {
    io("ok", row.ok);
    io("nic", row.nic);
    io("problems", row.problems);
  }
};

template <>
struct StateFields<Member> {
  template <class Io, class Self>
  static void list(Io& io, Self& m) {
    io("id", m.id);
    io("host", m.host);
    io("role", m.role);
    io("slot", m.slot);
    io("requested_slot", m.requested_slot);
    io("reason", m.reason);
    io("since", m.since);
    io("first_init_failures", m.first_init_failures);
  }
};

}  // namespace ddplaunch
