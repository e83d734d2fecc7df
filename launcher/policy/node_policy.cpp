// The node's own decisions: one function per event, top to bottom (node_policy.h).
#include "policy/node_policy.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "ddplaunch/base/exit_codes.h"
#include "ddplaunch/base/exit_status.h"
#include "ddplaunch/rendezvous/generation_format.h"
#include "policy/init_tracker.h"

namespace ddplaunch {

using decision::Log;
using decision::Severity;
using namespace node_decision;

namespace {
void append(NodePolicy::Decisions& out, NodePolicy::Decisions more) {
  out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}
}  // namespace

std::string NodePolicy::master_endpoint() const {
  return fmt::format("{}:{}", settings_.master_host, settings_.rendezvous_port);
}

// joining / rejoining → probing or running.
NodePolicy::Decisions NodePolicy::on_assignment(const AssignmentFacts& a) {
  if (state_ != NodeState::Joining && state_ != NodeState::Rejoining) return {};
  const bool first = state_ == NodeState::Joining;
  generation_ = a.generation;
  coordinator_missing_ = false;
  joined_once_ = true;
  Decisions out{TakeAssignment{}};
  if (spare_) {
    spare_ = false;
    out.push_back(Log{Severity::Warn, fmt::format("this hot spare takes the place of node {} in generation {} ({} "
                                                  "node(s), world size {})",
                                                  a.node_rank, a.generation, a.node_count, a.world_size)});
  }
  // The master runs the peer probe in generation 0 only (a launcher that joins a moved
  // coordinator later has nothing to probe for).
  if (first && a.generation == Generation{0} && a.probe_due) {
    state_ = NodeState::Probing;
    out.push_back(ProbePeers{});
    return out;
  }
  state_ = NodeState::Running;
  out.push_back(StartWorkers{});
  return out;
}

// probing → running: every node probed its peers; the master chose the interface (or kept
// the user's). A refusal comes as a stop order instead.
NodePolicy::Decisions NodePolicy::on_probe_verdict(Generation generation, const std::string& ifname) {
  if (state_ != NodeState::Probing || generation != generation_) return {};
  state_ = NodeState::Running;
  return {StartWorkers{ifname}};
}

// joining → joining as a spare: the job has its nodes; this launcher waits idle until the
// master gives it the slot of a lost or excluded node, or the job ends.
NodePolicy::Decisions NodePolicy::on_standby(const std::string& reason) {
  if (state_ != NodeState::Joining || spare_) return {};
  spare_ = true;
  coordinator_missing_ = false;
  joined_once_ = true;
  ++coordinator_waits_;  // a wait armed for a coordinator is stale now
  return {Log{Severity::Info, reason + " (`ddplaunch status --master ...` lists the membership)"}, WaitAsSpare{}};
}

NodePolicy::Decisions NodePolicy::on_elected() {
  settings_.host_server = true;
  return {HostCoordinator{}};
}

// running → stopping(rejoin) → rejoining.
NodePolicy::Decisions NodePolicy::on_restart_order(Generation generation, const std::string& reason,
                                                   bool workers_active) {
  if (state_ == NodeState::Finished || state_ == NodeState::Joining) return {};
  Decisions out{Log{Severity::Warn, fmt::format("master ordered a group restart (generation {}): {}", generation, reason)}};
  append(out, stop_workers_then(AfterStop::Rejoin, generation, workers_active));
  return out;
}

// running → stopping(report) → reporting. A second stop, or one after this node's own stop
// to report or exit, changes nothing.
NodePolicy::Decisions NodePolicy::on_stop_order(Generation generation, const std::string& reason, bool workers_active) {
  if (state_ == NodeState::Finished || state_ == NodeState::Joining) return {};
  Decisions out;
  if (!settings_.host_server) out.push_back(Log{Severity::Error, "master stopped the job: " + reason});
  if (state_ == NodeState::Reporting || (state_ == NodeState::Stopping && after_stop_ != AfterStop::Rejoin)) return out;
  append(out, stop_workers_then(AfterStop::Report, generation, workers_active));
  return out;
}

NodePolicy::Decisions NodePolicy::on_job_end(int exit_code) { return finish(exit_code); }

// The master refused or excluded this launcher after it joined: stop the workers, exit 2.
NodePolicy::Decisions NodePolicy::on_dismissed(const std::string& reason, bool workers_active) {
  if (state_ == NodeState::Finished) return {};
  Decisions out{Log{Severity::Error, "the master dismissed this node: " + reason}};
  if (state_ == NodeState::Joining) {
    append(out, finish(kExitConfigError));
  } else {
    local_problem_code_ = kExitConfigError;
    append(out, stop_workers_then(AfterStop::Exit, generation_, workers_active));
  }
  return out;
}

// A refusal while joining ends the node (the master said why); after joining it is a
// dismissal. On the master itself the refusal is its own plan's: said as it is.
NodePolicy::Decisions NodePolicy::on_refused(const std::string& reason, bool workers_active) {
  Decisions out;
  if (settings_.host_server) out.push_back(Log{Severity::Error, reason});
  else if (state_ != NodeState::Joining || spare_) return on_dismissed(reason, workers_active);
  else out.push_back(Log{Severity::Error, "the master refused this node: " + reason});
  append(out, on_lost("refused", kExitConfigError, workers_active));
  return out;
}

// Lost the master (or refused by it): stop workers, then exit with `exit_code` — unless this
// node already knows a configuration error of its own, which stays its status.
NodePolicy::Decisions NodePolicy::on_lost(const std::string& why, int exit_code, bool workers_active) {
  if (state_ == NodeState::Finished) return {};
  if (spare_) {
    Decisions out{Log{Severity::Error, fmt::format("lost the master {} while waiting as a hot spare — {} — the job is "
                                                   "over for this spare",
                                                   master_endpoint(), why)}};
    append(out, finish(exit_code));
    return out;
  }
  if (state_ == NodeState::Joining) {  // never got in: the master is unreachable or the job never formed
    Decisions out{Log{Severity::Error, fmt::format("could not join the job at the master {} — {}", master_endpoint(), why)}};
    append(out, finish(kExitConfigError));
    return out;
  }
  Decisions out{Log{Severity::Error,
                    fmt::format("lost the master {} — {} — stopping this node's workers", master_endpoint(), why)}};
  local_problem_code_ = local_problem_code_ == kExitConfigError ? kExitConfigError : exit_code;
  append(out, stop_workers_then(AfterStop::Exit, generation_, workers_active));
  return out;
}

// etcd: any state but finished → stopping → joining the next coordinator, bounded by the wait.
// A spare has nothing to stop: it joins the next coordinator as a launcher like the others.
NodePolicy::Decisions NodePolicy::on_coordinator_lost(const std::string& why, bool workers_active,
                                                      const std::string& address) {
  if (state_ == NodeState::Finished) return {};
  if (!coordinator_moves()) return on_lost(why, kExitFailure, workers_active);
  if (state_ == NodeState::Joining && coordinator_missing_) {  // the same loss: join again after a pause
    join_pause_s_ = join_pause_s_ == 0 ? kFirstJoinPauseS : std::min(kMostJoinPauseS, join_pause_s_ * 2);
    Decisions out;
    if (address != join_failed_at_) {
      join_failed_at_ = address;
      out.push_back(Log{Severity::Warn, fmt::format("cannot join the coordinator{} yet ({}): trying again, at most "
                                                    "every {}, until the wait of {} since the loss is over",
                                                    address.empty() ? "" : " at " + address, why,
                                                    human_duration(kMostJoinPauseS),
                                                    human_duration(settings_.coordinator_wait_s))});
    }
    out.push_back(JoinCoordinator{join_pause_s_});
    return out;
  }
  coordinator_missing_ = true;
  join_pause_s_ = 0;
  join_failed_at_ = address;
  Decisions out{Log{Severity::Warn,
                    fmt::format("lost the coordinator ({}): stopping this node's workers and joining the coordinator "
                                "etcd names next (waiting up to {}; the workers resume from their checkpoint in the "
                                "next generation)",
                                why, human_duration(settings_.coordinator_wait_s))}};
  spare_ = false;
  settings_.host_server = false;
  out.push_back(ArmCoordinatorWait{settings_.coordinator_wait_s, ++coordinator_waits_});
  if (state_ == NodeState::Stopping && after_stop_ == AfterStop::Exit) return out;  // ending anyway
  append(out, stop_workers_then(AfterStop::JoinCoordinator, generation_, workers_active));
  return out;
}

NodePolicy::Decisions NodePolicy::await_first_coordinator() {
  if (!coordinator_moves() || state_ != NodeState::Joining || joined_once_) return {};
  coordinator_missing_ = true;
  return {ArmCoordinatorWait{settings_.coordinator_wait_s, ++coordinator_waits_}};
}

NodePolicy::Decisions NodePolicy::on_coordinator_wait_over(int serial) {
  if (serial != coordinator_waits_ || state_ != NodeState::Joining || !coordinator_missing_) return {};
  Decisions out{Log{Severity::Error, fmt::format("no coordinator {} within {}: etcd named none this node could "
                                                 "join (are the other launchers and etcd up? `etcdctl get --prefix "
                                                 "/ddplaunch/` shows the job's keys); the wait is lease_ttl + "
                                                 "join_timeout (--rdzv-conf)",
                                                 joined_once_ ? "took over" : "was elected",
                                                 human_duration(settings_.coordinator_wait_s))}};
  append(out, finish(kExitFailure));
  return out;
}

NodePolicy::Decisions NodePolicy::on_seat_lost(const std::string& why, bool workers_active) {
  if (state_ == NodeState::Finished) return {};
  Decisions out{Log{Severity::Error, fmt::format("{} — stopping this node's workers and ending: without its lease this "
                                                 "launcher may be the partitioned one, and the others replace it",
                                                 why)}};
  local_problem_code_ = local_problem_code_ ? local_problem_code_ : kExitFailure;
  if (state_ == NodeState::Joining) {
    append(out, finish(local_problem_code_));
    return out;
  }
  append(out, stop_workers_then(AfterStop::Exit, generation_, workers_active));
  return out;
}

// running → reporting (every worker ended by itself); stopping → what the stop was for.
NodePolicy::Decisions NodePolicy::on_group_finished(Generation generation, int exit_code, const std::string& summary) {
  if (state_ == NodeState::Stopping) return on_workers_stopped();
  if (state_ != NodeState::Running || generation != generation_) return {};
  state_ = NodeState::Reporting;
  return {ReportFinished{generation_, local_problem_code_ != 0 ? local_problem_code_ : exit_code, summary}};
}

NodePolicy::Decisions NodePolicy::on_workers_stopped() {
  if (state_ != NodeState::Stopping) return {};
  switch (after_stop_) {
    case AfterStop::Rejoin:
      state_ = NodeState::Rejoining;
      return {Rejoin{stop_generation_}};
    case AfterStop::Report:
      state_ = NodeState::Reporting;
      return {ReportFinished{stop_generation_, local_problem_code_, "stopped"}};
    case AfterStop::JoinCoordinator:
      state_ = NodeState::Joining;
      return {JoinCoordinator{}};
    case AfterStop::Exit: break;
  }
  return finish(local_problem_code_ ? local_problem_code_ : kExitFailure);
}

// The first interrupt stops the workers with their grace and tells the master (it stops the
// job); the node ends by itself after the grace plus a bound whatever the master does. A
// second one kills the workers at once.
NodePolicy::Decisions NodePolicy::on_interrupt(int signal, bool workers_active) {
  if (state_ == NodeState::Finished) return {};
  const int code = 128 + signal;
  if (++interrupts_ > 1) {
    Decisions out{Log{Severity::Warn, fmt::format("{} again: killing workers now", signal_name(signal))},
                  StopWorkers{true}};
    if (!workers_active) {
      append(out, finish(code));
    }
    return out;
  }
  Decisions out{Log{Severity::Warn, fmt::format("received {}: stopping this node's workers (SIGTERM, SIGKILL after {:g} "
                                                "s) and telling the master",
                                                signal_name(signal), settings_.grace_s)}};
  local_problem_code_ = code;
  if (state_ == NodeState::Joining) {  // not joined yet: nothing to wait for
    append(out, finish(code));
    return out;
  }
  out.push_back(ReportProblem{generation_, fmt::format("interrupted by {} on {}", signal_name(signal), settings_.hostname), code});
  append(out, stop_workers_then(AfterStop::Report, generation_, workers_active));
  if (state_ != NodeState::Finished) out.push_back(ArmExitTimer{settings_.grace_s + kExitBoundAfterGraceS, code});
  return out;
}

NodePolicy::Decisions NodePolicy::on_exit_timer(int exit_code) { return finish(exit_code); }

NodePolicy::Decisions NodePolicy::on_local_problem(const std::string& message, int exit_code) {
  if (state_ == NodeState::Finished) return {};
  local_problem_code_ = exit_code;
  return {Log{Severity::Error, message}, ReportProblem{generation_, message, exit_code}};
}

NodePolicy::Decisions NodePolicy::on_coordinator_store_unusable(const std::string& error) {
  if (state_ == NodeState::Finished) return {};
  Decisions out{Log{Severity::Error, error}};
  append(out, finish(kExitConfigError));
  return out;
}

NodePolicy::Decisions NodePolicy::on_hosting_attempt(HostingOutcome outcome, const std::string& error,
                                                     PolicyClock::time_point now) {
  if (state_ == NodeState::Finished) return {};
  const bool retrying = hosting_retry_until_.has_value();
  switch (outcome) {
    case HostingOutcome::Listening: {
      Decisions out;
      if (retrying) out.push_back(Log{Severity::Info, fmt::format("the rendezvous port {} is free now", settings_.rendezvous_port)});
      hosting_retry_until_.reset();
      out.push_back(JoinRendezvous{});
      return out;
    }
    case HostingOutcome::PortTaken:
      if (!retrying && settings_.host_chosen_by_address) {
        settings_.host_server = false;
        return {Log{Severity::Info, fmt::format("the rendezvous port {} is already hosted on this machine (another "
                                                "ddplaunch of this job?): joining it as a node",
                                                settings_.rendezvous_port)},
                JoinRendezvous{.as_node = true}};
      }
      if (!retrying) {
        const double window_s = std::min(kHostingRetryWindowS, settings_.join_timeout_s);
        hosting_retry_until_ = now + std::chrono::duration_cast<PolicyClock::duration>(std::chrono::duration<double>(window_s));
        return {Log{Severity::Warn, fmt::format("{} — retrying every second for up to {} (a process of an earlier job "
                                                "may still be releasing it; the other nodes keep trying to join "
                                                "meanwhile)",
                                                error, human_duration(window_s))},
                RetryHosting{kHostingRetryPauseS}};
      }
      if (now < *hosting_retry_until_) return {RetryHosting{kHostingRetryPauseS}};
      return on_hosting_failed(error, true);
    case HostingOutcome::Failed:
      return on_hosting_failed(error, false);
  }
  return {};
}

NodePolicy::Decisions NodePolicy::on_hosting_failed(const std::string& error, bool port_taken) {
  if (state_ == NodeState::Finished) return {};
  Decisions out{Log{Severity::Error, error + (port_taken ? " — still held after the retries; stop the process that "
                                                           "holds it, or pass another port in --master HOST:PORT on "
                                                           "every node"
                                                         : "")}};
  append(out, finish(kExitConfigError));
  return out;
}

// A master that never answers (blackholed, wrong address) fails the node after three probes
// instead of waiting out the join timeout; a refused connection is normal while node 0
// starts, unless the master is this machine's own loopback on a multi-node job: the classic
// MASTER_ADDR=127.0.0.1 mistake.
NodePolicy::Decisions NodePolicy::on_join_probe(JoinProbe outcome, const std::string& message, double interval_s) {
  if (state_ != NodeState::Joining) return {};
  switch (outcome) {
    case JoinProbe::Connected: unanswered_probes_ = refused_probes_ = 0; return {};
    case JoinProbe::Answered: unanswered_probes_ = refused_probes_ = 0; break;
    case JoinProbe::Refused:
      ++refused_probes_;
      unanswered_probes_ = 0;
      break;
    case JoinProbe::Unanswered: ++unanswered_probes_; break;
    case JoinProbe::LocalError: break;  // EMFILE and the like: this machine's, not the master's
  }
  Decisions out;
  if (outcome != JoinProbe::Answered)
    out.push_back(Log{Severity::Warn, fmt::format("cannot reach the master {} yet: {} — retrying until the join timeout "
                                                  "({})",
                                                  master_endpoint(), message, human_duration(settings_.join_timeout_s))});
  std::string give_up;
  if (unanswered_probes_ >= kJoinProbesBeforeGivingUp)
    give_up = fmt::format("giving up: the master {} ({}:{}) has not answered TCP for {}. Check --master (node 0's "
                          "address and rendezvous port), that node 0 is running, and that no firewall drops the port",
                          settings_.master_host, settings_.master_ip, settings_.rendezvous_port,
                          human_duration(kJoinProbesBeforeGivingUp * interval_s));
  else if (settings_.master_is_loopback && settings_.nodes > 1 && refused_probes_ >= kJoinProbesBeforeGivingUp)
    give_up = fmt::format("giving up: the master {} is this machine's loopback and nothing listens on port {} here. On "
                          "a multi-node job every node must reach node 0 by a routable address: pass --master <node "
                          "0's IP or name>:{} (the classic MASTER_ADDR=127.0.0.1 mistake)",
                          settings_.master_ip, settings_.rendezvous_port, settings_.rendezvous_port);
  if (give_up.empty()) return out;
  out.push_back(Log{Severity::Error, give_up});
  append(out, finish(kExitConfigError));
  return out;
}

NodePolicy::Decisions NodePolicy::stop_workers_then(AfterStop next, Generation generation, bool workers_active) {
  state_ = NodeState::Stopping;
  after_stop_ = next;
  stop_generation_ = generation;
  if (!workers_active) return on_workers_stopped();
  return {StopWorkers{false}};
}

NodePolicy::Decisions NodePolicy::finish(int exit_code) {
  if (state_ == NodeState::Finished) return {};
  state_ = NodeState::Finished;
  return {Finish{exit_code}};
}

}  // namespace ddplaunch
