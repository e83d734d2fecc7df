// JobPolicy: every decision of the job, made once, on the master (DESIGN.md "The run of
// one node"). Events in, decisions out; no sockets, timers or processes, so unit tests
// drive it with short event scripts. It holds the job's phase and generation and turns each
// event into decisions; its parts hold the rules: the restart budget (RestartBudget), the
// init deadline (InitDeadline), the planned nodes and their standing (PlannedNodes), the
// failures remembered for the root cause (JobFailures), the ranks' phases (InitTracker) and
// what is said about their start-up (InitProgress), the peer probe (ProbeRound) and, in
// membership mode, the members (Membership). The rendezvous server and the node agents only
// report to it.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/base/result.h"
#include "ddplaunch/rendezvous/types.h"
#include "policy/decisions.h"
#include "policy/failure.h"
#include "policy/hang_action.h"
#include "policy/init_deadline.h"
#include "policy/init_progress.h"
#include "policy/init_tracker.h"
#include "policy/job_failures.h"
#include "policy/membership.h"
#include "policy/node_checks.h"
#include "policy/planned_nodes.h"
#include "policy/probe_round.h"
#include "policy/restart_budget.h"
#include "policy/restart_settings.h"
#include "policy/straggler_action.h"

namespace ddplaunch {

struct PolicySettings {
  RestartSettings restart;
  InitDeadlineFormula init_deadline;       // the init deadline's formula (the timeout.* keys)
  double setup_timeout_s = 0;           // 0: setup is unbounded (the default)
  bool worker_port_auto = true;         // a free port every generation
  std::string worker_master_addr;       // MASTER_ADDR every node reached
  bool master_is_loopback = false;
  bool refuse_version_mismatch = false; // version_mismatch: refuse
  bool doctor = false;                  // checks only: collect node reports, start no worker
  std::string doctor_host_record;       // doctor: the run history's lines on the hosts, in its table
  std::chrono::milliseconds wait_report_first{10000}, wait_report_every{30000};
  unsigned random_seed = 1;             // backoff jitter
  // Membership: spares and elastic MIN:MAX; off = a lost node ends the job.
  bool membership = false;
  MembershipSettings membership_settings;
  // Hangs: a hang restarts (within --max-restarts), stops the job, or is only reported;
  // history raises the init deadline to what past runs of the same job needed (0: no history).
  HangAction hang_action = HangAction::Stop;
  double history_init_s = 0;
  std::string history_explained;
  // Hosts that caused trouble in past runs (the run history's lemon hosts) and their record,
  // for the person: named when they join; with spares they are the spares kept in reserve
  // (membership_settings.reserve_hosts).
  std::map<std::string, std::string> troubled_hosts;
  // A straggler that held the job back for straggler_swap_after_s: reported only, or its node
  // swapped for a spare (a membership restart).
  StragglerAction straggler_action = StragglerAction::Report;
  double straggler_swap_after_s = 300;
};

enum class JobPhase {
  Joining,         // waiting for the nodes of generation 0
  Running,         // workers of `generation` started; nothing decided yet
  RestartPending,  // restart decided; waiting out the backoff
  Rejoining,       // restart ordered; nodes stop their workers and rejoin
  Stopping,        // stop ordered; waiting for every node to report finished
  Ended,           // job_end sent (or the job was refused)
};
std::string_view job_phase_name(JobPhase phase);
std::optional<JobPhase> job_phase_from_name(std::string_view name);

// What the master's shell keeps outside the policy and saves with its state, for a coordinator
// that takes over: the largest step interval the master's hang watch learnt (HangTracker),
// which seeds the new coordinator's hang watch instead of it learning again. The policy never
// reads it; it is only written into the same document.
struct CarriedState {
  double learnt_step_interval_s = 0;
};
struct RestoredPolicy;

class JobPolicy {
 public:
  using Decisions = std::vector<Decision>;
  using TimePoint = PolicyClock::time_point;

  explicit JobPolicy(PolicySettings settings);

  // Rendezvous: all nodes of `generation` are present (nodes sorted by node rank).
  Decisions on_nodes_joined(Generation generation, const std::vector<rendezvous::NodeRecord>& nodes, TimePoint now);
  // The shell carried out PlanGeneration: the workers of `generation` meet at `worker_port`
  // (a free one, or the one configured, checked bindable on the master).
  Decisions on_generation_planned(Generation generation, int worker_port);
  // The shell could not carry out the plan (no worker port free, port not bindable).
  Decisions on_plan_failed(const std::string& reason);
  // The rendezvous listens on `port`: a rank that fails to bind its c10d store there was
  // pointed at the launcher's port by the program. Said again at every plan, so that a policy
  // restored from another coordinator's state holds this coordinator's port.
  Decisions on_rendezvous_listening(int port);
  Decisions on_join_timeout(const std::string& what, bool during_rejoin);
  Decisions on_node_lost(int node, const std::string& why);
  // A program's c10d TCPStore client connected to the rendezvous port (`port`) from `peer`:
  // said at once, and named in the root cause if the job fails.
  Decisions on_foreign_store_client(const std::string& peer, int port);

  // Membership mode (job_policy_membership.cpp): launchers come and go; member ids are the
  // rendezvous server's. A lost record with node_rank -1 was a spare (or not started yet).
  Decisions on_member_joined(const rendezvous::NodeRecord& record, TimePoint now);
  Decisions on_member_lost(const rendezvous::NodeRecord& record, const std::string& why, TimePoint now);
  bool membership_enabled() const { return membership_.has_value(); }
  // etcd: this policy was restored from the last coordinator's state on a newly
  // elected one. Nobody is connected to it yet, so membership starts over (every launcher
  // joins again, asking for its old slot); budgets, failure history and the learnt init
  // deadline stay, and the next generation is generation() + 1.
  Decisions on_coordinator_moved();
  std::string membership_table(TimePoint now) const;  // "" without membership

  // Node agents.
  Decisions on_ranks_reported(int node, Generation generation, const std::vector<RankReport>& ranks, TimePoint now);
  Decisions on_worker_failed(int node, Generation generation, const FailureReport& report, TimePoint now);
  Decisions on_node_finished(int node, Generation generation, int exit_code);
  Decisions on_node_problem(int node, Generation generation, const std::string& message, int exit_code);
  Decisions on_doctor_report(int node, bool ok, const std::string& nic, const std::string& problems);
  // The peer probe's links one node ran; the verdict once every node reported.
  Decisions on_probe_results(int node, Generation generation, std::vector<preflight::ProbedLink> links);

  // The master's hang watch found `rank` without progress past the hang deadline:
  // a runtime failure of kind Hang, restarted or stopped by PolicySettings::hang_action, or
  // only reported (hang.action report: a warning, nothing stops).
  Decisions on_hang(Generation generation, int rank, const std::string& detail, TimePoint now);
  // A person quit `rank`'s debugger at the debug console and confirmed: the job ends on every
  // node with that as its root cause (exit status 1), no restart spent.
  Decisions on_debugger_quit(Generation generation, int rank);
  // `rank` on `node` has held the job back as a straggler for `held_s` (`what` says how): with
  // straggler.action restart-without, once it held for straggler_swap_after_s, its node is
  // swapped for a spare — excluded, the spare takes its slot, the group restarts (no restart
  // budget spent); without a spare that is said once a generation and the job goes on.
  Decisions on_persistent_straggler(int node, int rank, double held_s, const std::string& what, TimePoint now);

  // Timers the shell armed on the policy's behalf, and its periodic sweep.
  Decisions on_backoff_elapsed(Generation generation);
  Decisions on_init_deadline(Generation generation, int serial, TimePoint now);
  Decisions on_tick(TimePoint now);

  // Read-only view for `ddplaunch status` and doctor.
  JobPhase phase() const { return phase_; }
  Generation generation() const { return generation_; }
  const RestartBudget& budget() const { return budget_; }  // restarts used of the total
  // The init deadline of the current generation, and where its value came from.
  const InitDeadline& init_deadline() const { return init_deadline_; }
  HangAction hang_action() const { return settings_.hang_action; }
  const std::vector<rendezvous::NodeRecord>& nodes() const { return nodes_.records(); }
  const InitTracker& ranks() const { return tracker_; }
  std::string last_error(int node) const { return failures_.last_error(node); }
  // Seconds from the last rank entering init until every rank finished it (nullopt: not yet).
  std::optional<double> init_seconds() const { return init_progress_.init_seconds(); }
  int worker_port() const { return worker_port_; }

  // The job's whole state as a versioned JSON document, for another coordinator to go on
  // from (etcd failover; policy_state.h says what it holds), with what the shell's parts carry
  // along (`carried`). Times are saved relative to `now` and re-based on the restore's `now`.
  // A restore refuses a document of another version, a damaged one, or one saved under other
  // restart budgets or membership shape than `settings`, saying what differs.
  std::string save_state(TimePoint now, const CarriedState& carried = {}) const;
  static Result<RestoredPolicy> restore_state(PolicySettings settings, std::string_view json, TimePoint now);

 private:
  // The state document (policy_state.h) saves every field below but settings_: a new field
  // goes into its list too (policy_state.cpp), or a new coordinator loses it at failover.
  friend struct StateFields<JobPolicy>;

  Decisions decide_on_failure(const FailureReport& report);
  Decisions order_stop(int exit_code, const std::string& reason);
  Decisions end_job(int exit_code);
  Decisions finish_node(int node, NodeStanding standing, int exit_code);
  Decisions conclude_probe();
  Decisions apply_membership_change(const MembershipChange& change);
  Decisions restart_for_membership(const std::string& reason, bool hold);
  // "host h3 failed ranks in 2 ... of the last 10 runs: <standing>", for a host with a record.
  std::optional<decision::Log> name_troubled_host(const std::string& host, const std::string& standing) const;

  PolicySettings settings_;
  JobPhase phase_ = JobPhase::Joining;
  Generation generation_;
  PlannedNodes nodes_;
  InitTracker tracker_;
  InitProgress init_progress_;
  InitDeadline init_deadline_;
  RestartBudget budget_;
  JobFailures failures_;
  int worker_port_ = 0;

  std::string restart_reason_;
  int stop_exit_code_ = 1;
  bool stopping_for_failure_ = false;  // the stop follows a worker failure of this generation

  std::map<int, DoctorRow> doctor_rows_;  // by node rank
  ProbeRound probe_;                      // generation 0's peer probe
  std::string probe_summary_, probe_refusal_;
  std::optional<Membership> membership_;  // membership mode only
  int membership_restarts_ = 0;           // generations started by a membership change
  Generation first_generation_;           // membership's first plan: 0, or the one after a coordinator moved
  std::optional<Generation> straggler_answered_;  // the persistent straggler of this generation was acted on
};

// A JobPolicy restored from a saved state, and what the shell's parts carried along with it.
struct RestoredPolicy {
  JobPolicy policy;
  CarriedState carried;
};

}  // namespace ddplaunch
