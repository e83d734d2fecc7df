// JobPolicy: planning values, restart or stop, the end of the job — one place, pure. Each
// event is judged by the part that holds its rule (job_policy.h); here the judgements become
// the job's phase and decisions.
#include "policy/job_policy.h"

#include <set>

#include <algorithm>

#include <fmt/format.h>

#include "ddplaunch/base/exit_codes.h"
#include "ddplaunch/rendezvous/generation_format.h"
#include "policy/node_checks.h"
#include "policy/program_error.h"
#include "policy/root_cause.h"

namespace ddplaunch {

using namespace decision;

namespace {
void append(JobPolicy::Decisions& out, JobPolicy::Decisions more) {
  out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}
}  // namespace

std::string_view job_phase_name(JobPhase phase) {
  switch (phase) {
    case JobPhase::Joining: return "joining";
    case JobPhase::Running: return "running";
    case JobPhase::RestartPending: return "restart pending";
    case JobPhase::Rejoining: return "rejoining";
    case JobPhase::Stopping: return "stopping";
    case JobPhase::Ended: return "ended";
  }
  return "?";
}

std::optional<JobPhase> job_phase_from_name(std::string_view name) {
  for (JobPhase p : {JobPhase::Joining, JobPhase::Running, JobPhase::RestartPending, JobPhase::Rejoining,
                     JobPhase::Stopping, JobPhase::Ended})
    if (job_phase_name(p) == name) return p;
  return std::nullopt;
}

JobPolicy::JobPolicy(PolicySettings settings)
    : settings_(std::move(settings)),
      init_deadline_({settings_.init_deadline, settings_.history_init_s, settings_.history_explained, settings_.doctor}),
      budget_(settings_.restart, settings_.hang_action, settings_.random_seed) {
  if (settings_.membership) membership_.emplace(settings_.membership_settings);
}

JobPolicy::Decisions JobPolicy::on_nodes_joined(Generation generation, const std::vector<rendezvous::NodeRecord>& nodes,
                                                TimePoint now) {
  Decisions out;
  if (phase_ != JobPhase::Joining && phase_ != JobPhase::Rejoining) return out;
  generation_ = generation;
  nodes_.plan(nodes);
  failures_.new_generation();
  stopping_for_failure_ = false;
  init_progress_.begin(now);

  NodeFactsVerdict facts = check_node_facts(nodes, settings_.worker_master_addr, settings_.master_is_loopback,
                                            settings_.refuse_version_mismatch);
  if (!facts.warning.empty()) out.push_back(Log{Severity::Warn, facts.warning});
  if (!facts.refusal.empty()) {
    phase_ = JobPhase::Ended;
    out.push_back(RefuseJob{"the job cannot start:\n  " + facts.refusal});
    return out;
  }
  tracker_.reset(nodes_.node_of_each_rank(), now);
  if (generation == Generation{0} && !membership_) {  // with membership, each is named as it joins
    std::set<std::string> named_hosts;
    for (const auto& node : nodes) {
      if (!named_hosts.insert(node.facts.hostname).second) continue;  // a host is named once
      auto named = name_troubled_host(node.facts.hostname,
                                      node.node_rank == 0 ? std::string("it takes part: the master runs there")
                                                          : fmt::format("it takes part as node {} (with --spares, it "
                                                                        "would be kept in reserve as the spare)",
                                                                        node.node_rank));
      if (named) out.push_back(*named);
    }
  }
  // Only init failures lengthen the init deadline: a membership change is no failure, and a
  // program's own error (setup or runtime) says nothing about how long init takes here.
  init_deadline_.plan(nodes, budget_.init_failure_restarts());
  const bool port_at_fault = failures_.take_port_at_fault();
  out.push_back(PlanGeneration{generation, settings_.worker_port_auto || (generation > Generation{0} && port_at_fault),
                               init_deadline_.seconds(), init_deadline_.explained()});
  phase_ = JobPhase::Running;
  // The first generation waits for the peer probe: nodes start workers on StartWorkers.
  if (generation == Generation{0}) probe_.begin(nodes, generation, now);
  return out;
}

JobPolicy::Decisions JobPolicy::on_probe_results(int node, Generation generation,
                                                std::vector<preflight::ProbedLink> links) {
  if (!probe_.active() || generation != probe_.generation() || phase_ != JobPhase::Running) return {};
  if (!probe_.add(node, std::move(links))) return {};
  return conclude_probe();
}

// Every node reported (or the round's deadline passed): pick the interface or refuse.
JobPolicy::Decisions JobPolicy::conclude_probe() {
  const auto& planned = nodes_.records();
  const std::string user_value = planned.empty() ? "" : planned.front().facts.socket_ifname;
  // The nodes' facts carry NCCL's variable where there are GPUs, gloo's where there are none.
  const bool gpus = !planned.empty() && planned.front().facts.gpu_count > 0;
  preflight::InterfaceChoice choice = probe_.conclude(gpus ? "NCCL_SOCKET_IFNAME" : "GLOO_SOCKET_IFNAME", user_value,
                                                      settings_.worker_master_addr);
  probe_summary_ = choice.summary;
  probe_refusal_ = choice.refusal;
  Decisions out;
  for (const auto& w : choice.warnings) out.push_back(Log{Severity::Warn, w});
  if (!choice.refusal.empty() && !settings_.doctor) {
    const std::string reason = "the job cannot start: peer probe: " + choice.refusal;
    out.push_back(Log{Severity::Error, reason});  // the master says it; the nodes get it with the stop
    append(out, order_stop(kExitConfigError, reason));
    return out;
  }
  if (!choice.summary.empty()) out.push_back(Log{Severity::Info, choice.summary});
  out.push_back(StartWorkers{generation_, choice.from_user ? "" : choice.ifname});
  return out;
}

JobPolicy::Decisions JobPolicy::on_generation_planned(Generation generation, int worker_port) {
  if (generation == generation_) worker_port_ = worker_port;
  return {};
}

JobPolicy::Decisions JobPolicy::on_rendezvous_listening(int port) {
  failures_.set_rendezvous_port(port);
  return {};
}

JobPolicy::Decisions JobPolicy::on_plan_failed(const std::string& reason) {
  phase_ = JobPhase::Ended;
  return {RefuseJob{reason}};
}

JobPolicy::Decisions JobPolicy::on_foreign_store_client(const std::string& peer, int port) {
  if (auto note = failures_.note_foreign_store_client(peer, port)) return {Log{Severity::Error, *note}};
  return {};
}

JobPolicy::Decisions JobPolicy::on_join_timeout(const std::string& what, bool during_rejoin) {
  if (phase_ == JobPhase::Ended) return {};
  // An elastic job's join timeout bounds reaching MIN, not MAX (torchrun's rendezvous): with
  // MIN launchers here the last call starts the job, and a started job waits for no join.
  if (membership_ && !during_rejoin && (membership_->started() || membership_->min_reached()))
    return {Log{Severity::Info, what + " — not an error: the minimum of nodes is here, the job starts (or has "
                                       "started) with the nodes that joined"}};
  phase_ = JobPhase::Ended;
  std::string hint = during_rejoin
                         ? " (a node did not come back after stopping its workers: see its own output)"
                         : " (check that ddplaunch runs on those nodes with the same --job-id and master address)";
  return {Log{Severity::Error, what + hint}, AbortJoin{what + hint}};
}

JobPolicy::Decisions JobPolicy::on_node_lost(int node, const std::string& why) {
  if (phase_ == JobPhase::Ended) return {};
  const rendezvous::NodeRecord* record = nodes_.find(node);
  const std::string host = nodes_.host_of(node), address = record ? record->observed_address : "?";
  std::string what = fmt::format("node {} ({}, {}) was lost: {}", node, host, address, why);
  failures_.set_last_error(node, what);
  Decisions out{Log{Severity::Error, what + "; stopping the workers on every other node"}};
  if (phase_ != JobPhase::Stopping) append(out, order_stop(1, what));
  append(out, finish_node(node, NodeStanding::Lost, 1));
  return out;
}

JobPolicy::Decisions JobPolicy::on_ranks_reported(int node, Generation generation, const std::vector<RankReport>& ranks,
                                                  TimePoint now) {
  if (generation != generation_ || phase_ != JobPhase::Running) return {};
  bool moved = false;
  for (const auto& r : ranks) moved |= tracker_.update(node, r, now).moved;
  if (!moved) return {};  // a periodic report of steady ranks: nothing the init rules read
  Decisions out;
  // The deadline is suspended while a person holds a rank in a debugger (the others wait for
  // it by design) and armed afresh, with its whole length, once no rank is held.
  if (auto arm = init_deadline_.recheck(tracker_.deadline_applies() && !tracker_.any_in_debugger(), generation_))
    out.push_back(*arm);
  if (auto done = init_progress_.announce_init_done(tracker_, generation_, now))
    out.push_back(Log{Severity::Info, std::move(*done)});
  return out;
}

JobPolicy::Decisions JobPolicy::on_init_deadline(Generation generation, int serial, TimePoint now) {
  if (generation != generation_ || !init_deadline_.fired(serial) || phase_ != JobPhase::Running) return {};
  std::vector<int> hung = tracker_.ranks_in_judged_init();
  if (hung.empty()) return {};
  const int rank = hung.front();
  FailureReport failure = nodes_.failure_of_rank(
      rank, tracker_.ranks()[static_cast<std::size_t>(rank)], FailurePhase::Init, FailureKind::InitTimeout,
      fmt::format("{} still in init {} after the last rank of the job entered init — the group's init deadline ({}; "
                  "set timeout.base_s / timeout.min_s / timeout.max_s to change it)",
                  name_ranks(hung, tracker_), human_duration(init_deadline_.seconds()), init_deadline_.explained()));
  return on_worker_failed(failure.failure.node_rank, generation_, failure, now);
}

JobPolicy::Decisions JobPolicy::on_worker_failed(int node, Generation generation, const FailureReport& report,
                                                 TimePoint now) {
  if (generation != generation_ || phase_ == JobPhase::Ended || phase_ == JobPhase::Joining) return {};
  // A node speaks only for its own ranks: a report naming another node's rank (a bug, or a
  // peer that joined to steer the job) must not restart or stop anything.
  if (!tracker_.holds(node, report.failure.global_rank))
    return {Log{Severity::Warn,
                fmt::format("ignored a failure report from node {} ({}) about rank {}, which is not one of its ranks "
                            "in generation {}",
                            node, nodes_.host_of(node), report.failure.global_rank, generation_)}};
  const bool first_of_generation = failures_.record(node, report);
  Decisions out{Log{Severity::Error, "failure: " + describe_failure_line(report)}};
  if (phase_ != JobPhase::Running) return out;  // this generation's fate is decided already
  // Init failures that keep starting on one node: replace the node, not restart it again.
  if (membership_ && first_of_generation && is_init_failure(report.failure)) {
    MembershipChange change = membership_->on_first_init_failure(node, describe_failure_line(report), now);
    if (change.kind != MembershipChange::Kind::None) {
      append(out, apply_membership_change(change));
      return out;
    }
  }
  append(out, decide_on_failure(report));
  return out;
}

JobPolicy::Decisions JobPolicy::decide_on_failure(const FailureReport& report) {
  RestartVerdict verdict = budget_.spend_on(report.failure, generation_);
  if (!verdict.restart) {
    Decisions out{Log{Severity::Error, "not restarting: " + verdict.refusal}};
    append(out, order_stop(failure_exit_code(report.failure), describe_failure_line(report)));
    stopping_for_failure_ = true;
    return out;
  }
  phase_ = JobPhase::RestartPending;
  restart_reason_ = describe_failure_line(report);
  return {Log{Severity::Warn, fmt::format("restarting the whole group on every node: generation {} (restart {} of {}) "
                                          "after {:.2f} s, because {}",
                                          generation_.next(), budget_.used(), verdict.budget, verdict.backoff_s,
                                          restart_reason_)},
          ScheduleRestart{generation_.next(), verdict.backoff_s}};
}

JobPolicy::Decisions JobPolicy::on_backoff_elapsed(Generation generation) {
  if (phase_ != JobPhase::RestartPending || generation != generation_.next()) return {};  // stopped meanwhile
  phase_ = JobPhase::Rejoining;
  generation_ = generation;
  nodes_.reactivate_finished();
  return {OrderRestart{generation, restart_reason_, membership_ ? membership_->active_ids() : std::vector<int>{},
                       membership_ ? nodes_.member_ids() : std::vector<int>{}}};
}

JobPolicy::Decisions JobPolicy::order_stop(int exit_code, const std::string& reason) {
  phase_ = JobPhase::Stopping;
  stop_exit_code_ = exit_code;
  Decisions out{OrderStop{generation_, exit_code, reason}};
  // Stopped in a restart backoff after every node had finished its generation: no node will
  // report finishing again, so nothing else would ever end the job.
  if (nodes_.any_planned() && nodes_.active_count() == 0) append(out, end_job(exit_code));
  return out;
}

JobPolicy::Decisions JobPolicy::on_node_finished(int node, Generation generation, int exit_code) {
  if (generation != generation_ || phase_ == JobPhase::Ended) return {};
  return finish_node(node, NodeStanding::Finished, exit_code);
}

JobPolicy::Decisions JobPolicy::finish_node(int node, NodeStanding standing, int exit_code) {
  if (!nodes_.finish(node, standing, exit_code) || nodes_.active_count() > 0) return {};
  switch (phase_) {
    case JobPhase::Running: return end_job(nodes_.first_failed_exit());  // every worker ended by itself
    case JobPhase::Stopping: return end_job(stop_exit_code_);
    default: return {};  // a restart is on its way
  }
}

JobPolicy::Decisions JobPolicy::on_node_problem(int node, Generation generation, const std::string& message,
                                               int exit_code) {
  if (phase_ == JobPhase::Ended || generation > generation_) return {};
  // A problem is a failure whatever code it names: it can never end the job as a success.
  if (exit_code == 0) exit_code = 1;
  failures_.set_last_error(node, message);
  Decisions out{Log{Severity::Error, fmt::format("node {}: {}", node, message)}};
  if (phase_ == JobPhase::Stopping) return out;
  append(out, order_stop(exit_code, fmt::format("node {}: {}", node, message)));
  return out;
}

JobPolicy::Decisions JobPolicy::end_job(int exit_code) {
  phase_ = JobPhase::Ended;
  Decisions out;
  if (exit_code != 0 && failures_.first())
    out.push_back(Log{Severity::Error, failures_.root_cause(generation_, budget_.text())});
  else if (exit_code == 0 && !settings_.doctor)
    out.push_back(Log{Severity::Info, fmt::format("job succeeded: {} node(s), generation {}, {} restart(s){}",
                                                  nodes_.records().size(), generation_, budget_.used(),
                                                  membership_restarts_ > 0
                                                      ? fmt::format(", {} membership change(s)", membership_restarts_)
                                                      : "")});
  out.push_back(EndJob{exit_code});
  return out;
}

JobPolicy::Decisions JobPolicy::on_tick(TimePoint now) {
  if (membership_ && phase_ != JobPhase::Ended) {  // the last call, the wait for a launcher
    MembershipChange change = membership_->on_tick(now);
    if (change.kind != MembershipChange::Kind::None) return apply_membership_change(change);
  }
  if (phase_ != JobPhase::Running) return {};
  if (probe_.overdue(now)) return conclude_probe();  // the nodes that did not report count as failures
  if (settings_.setup_timeout_s > 0) {
    auto limit = std::chrono::milliseconds(static_cast<long long>(settings_.setup_timeout_s * 1000));
    auto late = tracker_.in_setup_longer_than(limit, now);
    if (!late.empty()) {
      const int rank = late.front();
      auto failure = nodes_.failure_of_rank(
          rank, tracker_.ranks()[static_cast<std::size_t>(rank)], FailurePhase::Init, FailureKind::SetupTimeout,
          fmt::format("{} still in setup after {} (setup_timeout_s, which you set; 0 = unbounded)",
                      name_ranks(late, tracker_), human_duration(settings_.setup_timeout_s)));
      return on_worker_failed(failure.failure.node_rank, generation_, failure, now);
    }
  }
  if (auto report = init_progress_.wait_report(tracker_, now, settings_.wait_report_first, settings_.wait_report_every))
    return {Log{Severity::Info, std::move(*report)}};
  return {};
}

JobPolicy::Decisions JobPolicy::on_doctor_report(int node, bool ok, const std::string& nic, const std::string& problems) {
  if (!settings_.doctor || phase_ != JobPhase::Running) return {};
  doctor_rows_[node] = DoctorRow{ok, nic, problems};
  if (doctor_rows_.size() < nodes_.records().size()) return {};
  bool all_ok = probe_refusal_.empty();
  for (const auto& [n, row] : doctor_rows_) all_ok = all_ok && row.ok;
  std::string ring;
  if (!probe_.links().empty())
    ring = "peer probe (each node to its ring neighbour; every pair on small jobs):\n" +
           preflight::render_ring_table(probe_.links()) +
           (probe_refusal_.empty() ? probe_summary_ : "peer probe: FAIL: " + probe_refusal_) + "\n";
  std::string table = render_doctor_table(nodes_.records(), doctor_rows_, worker_port_, init_deadline_.explained(),
                                          all_ok, ring + settings_.doctor_host_record);
  Decisions out{PrintTable{table}};
  append(out, end_job(all_ok ? 0 : 1));
  return out;
}

}  // namespace ddplaunch
