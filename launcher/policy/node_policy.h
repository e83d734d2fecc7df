// The node's own decisions: when this launcher stops its workers, rejoins,
// reports, and ends, with which exit status. Pure like the JobPolicy — events in, decisions
// out, no clock, no sockets: NodeAgent reports what happened (the master's orders, its
// group's end, a signal, a lost or refusing master, a join probe) and carries the answers
// out. The job's fate stays the master's (JobPolicy); this covers what only the node can
// decide: ending itself when the master cannot tell it, and what its report says.
//
//   joining → probing → running                                  (generation 0: peers probed, the master's verdict)
//   joining → running → stopping → rejoining → running …       (restart ordered)
//                     → stopping → reporting → finished          (stop ordered / all exited)
//   joining → finished                                           (never got in)
//   joining (spare) → running                                    (a hot spare given a slot)
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"
#include "policy/decisions.h"
#include "policy/init_tracker.h"  // PolicyClock

namespace ddplaunch {

enum class NodeState {
  Joining,    // waiting for the first assignment
  Probing,    // first assignment in hand: probing the peers, then waiting for the master's verdict
  Running,    // this generation's workers run (or doctor's checks were sent)
  Stopping,   // workers are being stopped; what follows is decided when they are gone
  Rejoining,  // workers gone, rejoined for the next generation, waiting for its assignment
  Reporting,  // workers gone, node_finished sent, waiting for job_end
  Finished,   // exit code known; the event loop winds down
};

namespace node_decision {

struct StopWorkers {     // SIGTERM to every worker, SIGKILL after the grace (now: at once)
  bool now = false;
};
struct Rejoin {          // workers gone: ask the master for generation G's assignment
  Generation generation;
};
struct ReportFinished {  // workers gone: tell the master how they ended
  Generation generation;
  int exit_code = 0;
  std::string summary;
};
struct ReportProblem {   // this node cannot go on (a signal, a failed local check)
  Generation generation;
  std::string text;
  int exit_code = 0;
};
struct ArmExitTimer {    // whatever the master does, end with `exit_code` after `seconds`
  double seconds = 0;
  int exit_code = 0;
};
struct Finish {          // the node ends now with this status
  int exit_code = 0;
};
// etcd: join the coordinator etcd names (the newest one known) after `after_s` seconds (0:
// now), or as soon as one is published.
struct JoinCoordinator {
  double after_s = 0;
};
struct ArmCoordinatorWait {  // call on_coordinator_wait_over(serial) after `seconds`
  double seconds = 0;
  int serial = 0;
};
// Node 0: join the rendezvous it hosts now, or (as_node) the one another launcher of this job
// hosts on this machine, as an ordinary node (this launcher hosts nothing).
struct JoinRendezvous {
  bool as_node = false;
};
struct RetryHosting {    // try to host the rendezvous again after `after_s`, then on_hosting_attempt
  double after_s = 0;
};
// The assignment that came is this node's now: its node rank, its log prefix, the etcd run it
// joined; the join watch is over.
struct TakeAssignment {};
struct ProbePeers {};    // probe the peers with the assignment; its workers start on the master's verdict
struct StartWorkers {    // start the assignment's workers (doctor: send its checks)
  std::string probe_ifname;  // the interface the peer probe chose, "" when none ran
};
struct WaitAsSpare {};   // a hot spare: no join deadline, no probe, until the master gives it a slot
struct HostCoordinator {};  // etcd: elected; host the rendezvous and the coordinator here

}  // namespace node_decision

using NodeDecision = std::variant<decision::Log, node_decision::StopWorkers, node_decision::Rejoin,
                                  node_decision::ReportFinished, node_decision::ReportProblem,
                                  node_decision::ArmExitTimer, node_decision::Finish,
                                  node_decision::JoinCoordinator, node_decision::ArmCoordinatorWait,
                                  node_decision::JoinRendezvous, node_decision::RetryHosting,
                                  node_decision::TakeAssignment, node_decision::ProbePeers,
                                  node_decision::StartWorkers, node_decision::WaitAsSpare,
                                  node_decision::HostCoordinator>;

struct NodePolicySettings {
  bool host_server = false;     // this node hosts the rendezvous: it is the master
  double grace_s = 0;           // SIGTERM → SIGKILL for the workers
  std::string hostname;
  std::string master_host;      // as given
  std::string master_ip;        // resolved
  int rendezvous_port = 0;
  bool master_is_loopback = false;
  bool host_chosen_by_address = false;  // no --node-rank: hosting because --master names this machine
  int nodes = 1;                // --nodes (MIN when elastic)
  double join_timeout_s = 0;
  // etcd: the coordinator may move; a lost one is waited for this long (0: it
  // cannot move — node 0 hosts it — and its loss ends the node).
  double coordinator_wait_s = 0;
};

// How one TCP probe of an unreachable master ended (the join watch, while not joined);
// Connected: the rendezvous connection is up, the other nodes are awaited (no probe).
enum class JoinProbe { Answered, Refused, Unanswered, LocalError, Connected };

// An assignment as the node's policy sees it (the agent keeps the assignment itself).
struct AssignmentFacts {
  Generation generation;
  int node_rank = 0;
  int node_count = 0;
  int world_size = 0;
  bool probe_due = false;  // the peers are to be probed first (PeerProbeRun::due)
};

// How node 0's attempt to listen on the rendezvous port ended.
enum class HostingOutcome { Listening, PortTaken, Failed };

class NodePolicy {
 public:
  using Decisions = std::vector<NodeDecision>;
  // Past a signal, the node ends by itself after the grace plus this bound.
  static constexpr double kExitBoundAfterGraceS = 5;
  static constexpr int kJoinProbesBeforeGivingUp = 3;
  static constexpr double kFirstJoinPauseS = 1;
  static constexpr double kMostJoinPauseS = 8;
  // A rendezvous port held by another process (an earlier job's launcher releasing it) is
  // tried again every kHostingRetryPauseS for at most this long (and never past the join timeout).
  static constexpr double kHostingRetryWindowS = 30;
  static constexpr double kHostingRetryPauseS = 1;

  explicit NodePolicy(NodePolicySettings settings) : settings_(std::move(settings)) {}

  NodeState state() const { return state_; }
  Generation generation() const { return generation_; }
  bool spare() const { return spare_; }
  bool finished() const { return state_ == NodeState::Finished; }
  int local_problem_code() const { return local_problem_code_; }
  // This launcher hosts the rendezvous (and the coordinator): node 0, or on etcd the elected
  // launcher until it loses its coordinator.
  bool host_server() const { return settings_.host_server; }
  // etcd: this launcher was elected; it coordinates from now on (HostCoordinator).
  Decisions on_elected();

  // Start-up. An assignment is taken while joining or rejoining (TakeAssignment); then the
  // peers are probed (generation 0, when due: ProbePeers, and the workers wait for the
  // master's verdict) or the workers start (StartWorkers). A spare given a slot says so.
  Decisions on_assignment(const AssignmentFacts& assignment);
  // The master's verdict on the peer probe of `generation`: the workers start.
  Decisions on_probe_verdict(Generation generation, const std::string& ifname);
  // The master keeps this launcher as a hot spare (`reason`): a coordinator exists, any wait
  // for one is over, and no join deadline holds.
  Decisions on_standby(const std::string& reason);

  // The master's orders.
  Decisions on_restart_order(Generation generation, const std::string& reason, bool workers_active);
  Decisions on_stop_order(Generation generation, const std::string& reason, bool workers_active);
  Decisions on_job_end(int exit_code);
  // The master refused or excluded this launcher after it joined, or lost it.
  Decisions on_dismissed(const std::string& reason, bool workers_active);
  Decisions on_refused(const std::string& reason, bool workers_active);
  Decisions on_lost(const std::string& why, int exit_code, bool workers_active);
  // etcd: the connection to the coordinator is gone, or etcd named a newer one.
  // The workers stop (the new coordinator orders a new generation); the node joins the next
  // coordinator, and ends if none is published within coordinator_wait_s.
  // While no coordinator could be joined since the loss, a failed join is not a new loss: the
  // wait armed at the loss still bounds it, and the next join comes after a pause that grows
  // (kFirstJoinPauseS, doubled up to kMostJoinPauseS); a repeated failure at the same
  // `address` is said once.
  Decisions on_coordinator_lost(const std::string& why, bool workers_active, const std::string& address = "");
  Decisions on_coordinator_wait_over(int serial);
  // etcd: registered; the first coordinator is awaited within the same bound as a lost one's
  // successor (an election that never ends, or a coordinator nobody can join, ends the node).
  Decisions await_first_coordinator();
  // etcd: this launcher could not register with etcd at all (wrong endpoints, refused
  // credentials): it ends with a configuration error.
  Decisions on_coordinator_store_unusable(const std::string& error);
  // etcd: this launcher's own lease is gone (etcd unreachable, or it expired): it may be the
  // partitioned one, so it stops its workers and ends rather than act without a seat.
  Decisions on_seat_lost(const std::string& why, bool workers_active);
  bool coordinator_moves() const { return settings_.coordinator_wait_s > 0; }

  // This node's workers: all ended by themselves (code/summary of the first failed rank),
  // or the stop this node ordered is complete.
  Decisions on_group_finished(Generation generation, int exit_code, const std::string& summary);
  Decisions on_workers_stopped();

  // SIGINT / SIGTERM / SIGHUP; the exit timer armed by the first one.
  Decisions on_interrupt(int signal, bool workers_active);
  Decisions on_exit_timer(int exit_code);

  // The node's own failed check (socket interface...), reported to the master.
  Decisions on_local_problem(const std::string& message, int exit_code);
  // Node 0 tried to listen on the rendezvous port (at start, and at each retry). Listening:
  // join it. The port held by another process: without --node-rank (two launchers of this job
  // on one machine), the first hosts and this one joins it as a node; otherwise retry every
  // kHostingRetryPauseS for kHostingRetryWindowS (bounded by the join timeout), then give up.
  Decisions on_hosting_attempt(HostingOutcome outcome, const std::string& error, PolicyClock::time_point now);
  // A probe of a master this node has not reached yet; `interval_s` between probes.
  Decisions on_join_probe(JoinProbe outcome, const std::string& message, double interval_s);

 private:
  enum class AfterStop { Rejoin, Report, Exit, JoinCoordinator };
  Decisions stop_workers_then(AfterStop next, Generation generation, bool workers_active);
  Decisions finish(int exit_code);
  Decisions on_hosting_failed(const std::string& error, bool port_taken);  // node 0's port stayed unusable
  std::string master_endpoint() const;

  NodePolicySettings settings_;
  NodeState state_ = NodeState::Joining;
  AfterStop after_stop_ = AfterStop::Report;
  Generation generation_;       // of the current assignment; a restart order names the next
  Generation stop_generation_;  // the generation a pending rejoin or finished report is for
  int local_problem_code_ = 0;  // a local interrupt or failed check: this node's own status, wins over the report
  int interrupts_ = 0;
  int unanswered_probes_ = 0;
  int refused_probes_ = 0;
  bool spare_ = false;        // joined, kept idle as a hot spare until the master gives it a slot
  int coordinator_waits_ = 0; // serial of the last coordinator wait (older timers are stale)
  bool coordinator_missing_ = false;  // lost (or none yet), and none joined since: the wait is armed
  bool joined_once_ = false;          // an assignment was taken: a coordinator existed
  double join_pause_s_ = 0;           // before the next join while the coordinator is missing
  std::string join_failed_at_;        // the address whose failed join was said last
  std::optional<PolicyClock::time_point> hosting_retry_until_;  // the held port's retries end then
};

}  // namespace ddplaunch
