// JobPolicy: planning values, restart or stop, the end of the job — one place, pure.
#include "policy/job_policy.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ddplaunch/preflight/timeout_policy.h"
#include "ddplaunch/base/exit_codes.h"
#include "ddplaunch/base/small_math.h"
#include "ddplaunch/base/name_table.h"
#include "policy/node_checks.h"
#include "policy/program_error.h"
#include "policy/root_cause.h"

namespace ddplaunch {

using namespace decision;

namespace {
constexpr NameTable<NodeStanding, 3> kNodeStandingNames{{{
    {NodeStanding::Active, "active"},
    {NodeStanding::Finished, "finished"},
    {NodeStanding::Lost, "lost"},
}}};

bool mentions_port_in_use(const WorkerFailure& f) {
  auto has = [](const std::string& s) {
    return s.find("EADDRINUSE") != std::string::npos || s.find("ddress already in use") != std::string::npos;
  };
  return has(f.detail) || std::any_of(f.tail.begin(), f.tail.end(), has);
}

// c10d's own words when a rank cannot host its store: "failed to bind to [::]:PORT (errno:
// 98 - Address already in use)".
bool failed_to_bind_port(const WorkerFailure& f, int port) {
  if (port <= 0) return false;
  const std::string needle = fmt::format(":{} (errno: 98", port);
  auto has = [&needle](const std::string& s) {
    return s.find("failed to bind") != std::string::npos && s.find(needle) != std::string::npos;
  };
  return has(f.detail) || std::any_of(f.tail.begin(), f.tail.end(), has);
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

std::string_view node_standing_name(NodeStanding state) { return kNodeStandingNames.name(state); }
std::optional<NodeStanding> node_standing_from_name(std::string_view name) { return kNodeStandingNames.parse(name); }

JobPolicy::JobPolicy(PolicySettings settings) : settings_(std::move(settings)), rng_(settings_.random_seed) {
  if (settings_.membership) membership_.emplace(settings_.membership_settings);
}

std::string JobPolicy::last_error(int node) const {
  auto it = last_error_by_node_.find(node);
  return it == last_error_by_node_.end() ? std::string() : it->second;
}

int JobPolicy::active_nodes() const {
  return static_cast<int>(std::count_if(node_states_.begin(), node_states_.end(),
                                        [](const auto& n) { return n.second == NodeStanding::Active; }));
}

JobPolicy::Decisions JobPolicy::on_nodes_joined(long generation, const std::vector<rendezvous::NodeRecord>& nodes,
                                                TimePoint now) {
  Decisions out;
  if (phase_ != JobPhase::Joining && phase_ != JobPhase::Rejoining) return out;
  generation_ = generation;
  nodes_ = nodes;
  node_states_.clear();
  for (const auto& n : nodes) node_states_[n.node_rank] = NodeStanding::Active;
  first_failure_.reset();
  stopping_for_failure_ = false;
  finished_exit_code_ = 0;
  deadline_armed_ = false;
  init_done_announced_ = false;
  generation_started_ = now;

  NodeFactsVerdict facts = check_node_facts(nodes, settings_.worker_master_addr, settings_.master_is_loopback,
                                            settings_.refuse_version_mismatch);
  if (!facts.warning.empty()) out.push_back(Log{Severity::Warn, facts.warning});
  if (!facts.refusal.empty()) {
    phase_ = JobPhase::Ended;
    out.push_back(RefuseJob{"the job cannot start:\n  " + facts.refusal});
    return out;
  }
  std::vector<int> node_of_rank;
  for (const auto& n : nodes)
    for (int i = 0; i < n.facts.nproc; ++i) node_of_rank.push_back(n.node_rank);
  tracker_.reset(node_of_rank, now);
  last_wait_report_ = now;

  double rtt_ms = 0;
  for (const auto& n : nodes) rtt_ms = std::max(rtt_ms, n.rtt_ms);
  // The dedicated-NIC allowance applies when every node's user chose a socket interface.
  const bool dedicated_nic = !settings_.doctor && nodes.size() > 1 &&
                             std::all_of(nodes.begin(), nodes.end(), [](const auto& n) { return !n.facts.socket_ifname.empty(); });
  const int node_count = static_cast<int>(nodes.size());
  // Only init failures lengthen the init deadline: a membership change is no failure, and a
  // program's own error (setup or runtime) says nothing about how long init takes here.
  const int gen = init_failure_restarts_;
  timeout_s_ = preflight::compute_timeout(settings_.timeout, node_count, dedicated_nic, rtt_ms, gen);
  timeout_explained_ = preflight::explain_timeout(settings_.timeout, node_count, dedicated_nic, rtt_ms, gen);
  apply_history_to_init_deadline();
  PlanGeneration plan{generation, settings_.worker_port_auto || (generation > 0 && port_at_fault_), timeout_s_,
                      timeout_explained_};
  port_at_fault_ = false;
  phase_ = JobPhase::Running;
  out.push_back(plan);
  // The first generation waits for the peer probe: nodes start workers on StartWorkers.
  if (generation == 0) probe_.begin(nodes, generation, now);
  return out;
}

JobPolicy::Decisions JobPolicy::on_probe_results(int node, long generation, std::vector<preflight::ProbedLink> links) {
  if (!probe_.active() || generation != probe_.generation() || phase_ != JobPhase::Running) return {};
  if (!probe_.add(node, std::move(links))) return {};
  return conclude_probe();
}

// Every node reported (or the round's deadline passed): pick the interface or refuse.
JobPolicy::Decisions JobPolicy::conclude_probe() {
  const std::string user_value = nodes_.empty() ? "" : nodes_.front().facts.socket_ifname;
  // The nodes' facts carry NCCL's variable where there are GPUs, gloo's where there are none.
  const bool gpus = !nodes_.empty() && nodes_.front().facts.gpu_count > 0;
  preflight::InterfaceChoice choice = probe_.conclude(gpus ? "NCCL_SOCKET_IFNAME" : "GLOO_SOCKET_IFNAME", user_value,
                                                      settings_.worker_master_addr);
  probe_summary_ = choice.summary;
  probe_refusal_ = choice.refusal;
  Decisions out;
  for (const auto& w : choice.warnings) out.push_back(Log{Severity::Warn, w});
  if (!choice.refusal.empty() && !settings_.doctor) {
    const std::string reason = "the job cannot start: peer probe: " + choice.refusal;
    out.push_back(Log{Severity::Error, reason});  // the master says it; the nodes get it with the stop
    Decisions stop = order_stop(kExitConfigError, reason);
    out.insert(out.end(), stop.begin(), stop.end());
    return out;
  }
  if (!choice.summary.empty()) out.push_back(Log{Severity::Info, choice.summary});
  out.push_back(StartWorkers{generation_, choice.from_user ? "" : choice.ifname});
  return out;
}

JobPolicy::Decisions JobPolicy::on_plan_failed(const std::string& reason) {
  phase_ = JobPhase::Ended;
  return {RefuseJob{reason}};
}

// What happened, then the one explanation and fix both ways of seeing the mistake share.
static std::string store_on_rendezvous_port_note(const std::string& what, int port) {
  return fmt::format(
      "{}: the program's init_method (tcp://HOST:{}) or TCPStore names the launcher's port, which speaks another "
      "protocol, so the store calls fail (a crash such as std::bad_alloc may follow). Use init_method='env://' (or "
      "none), or tcp://$MASTER_ADDR:$MASTER_PORT: rank 0 hosts the store there. With the Python shim (--shim auto) "
      "this is rewritten for you",
      what, port);
}

JobPolicy::Decisions JobPolicy::on_foreign_store_client(const std::string& peer, int port) {
  const bool first = foreign_store_note_.empty();
  foreign_store_note_ = store_on_rendezvous_port_note(
      fmt::format("a worker's c10d TCPStore client ({}) connected to ddplaunch's rendezvous port {}", peer, port), port);
  if (!first) return {};
  return {Log{Severity::Error, foreign_store_note_}};
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
  const rendezvous::NodeRecord* record = find_node(node);
  const std::string host = host_of(node), address = record ? record->observed_address : "?";
  std::string what = fmt::format("node {} ({}, {}) was lost: {}", node, host, address, why);
  last_error_by_node_[node] = what;
  Decisions out{Log{Severity::Error, what + "; stopping the workers on every other node"}};
  if (phase_ != JobPhase::Stopping) {
    Decisions stop = order_stop(1, what);
    out.insert(out.end(), stop.begin(), stop.end());
  }
  Decisions finished = finish_node(node, NodeStanding::Lost, 1);
  out.insert(out.end(), finished.begin(), finished.end());
  return out;
}

const rendezvous::NodeRecord* JobPolicy::find_node(int node) const {
  for (const auto& n : nodes_)
    if (n.node_rank == node) return &n;
  return nullptr;
}

std::string JobPolicy::host_of(int node) const {
  const rendezvous::NodeRecord* record = find_node(node);
  return record ? record->facts.hostname : "?";
}

JobPolicy::Decisions JobPolicy::on_ranks_reported(int node, long generation, const std::vector<RankReport>& ranks,
                                                  TimePoint now) {
  if (generation != generation_ || phase_ != JobPhase::Running) return {};
  for (const auto& r : ranks) tracker_.update(node, r, now);
  Decisions out = recheck_init_deadline();
  if (auto done = announce_init_done(now)) out.push_back(*done);
  return out;
}

// Once per generation, when every rank has reported a finished init (init_ok) and runs:
// the line people (and bench/run gpu-check) read to know the process group is up, and how
// long start-up took.
std::optional<Decision> JobPolicy::announce_init_done(TimePoint now) {
  if (init_done_announced_) return std::nullopt;
  const auto& ranks = tracker_.ranks();
  const bool all_initialised = !ranks.empty() && std::all_of(ranks.begin(), ranks.end(), [](const TrackedRank& t) {
    return t.last.phase == RankPhase::Running && t.last.init_entries > 0;
  });
  if (!all_initialised) return std::nullopt;
  init_done_announced_ = true;
  const double seconds = std::chrono::duration<double>(now - generation_started_).count();
  // The history learns what the init deadline measures: from the last rank entering init to
  // every rank running, never the setup (data loading, imports) before it.
  const auto init_began = tracker_.last_entered_init().value_or(now);
  init_seconds_ = std::chrono::duration<double>(now - init_began).count();
  return Log{Severity::Info, fmt::format("generation {}: all {} ranks finished init (init_ok) {:.2f} s after the start "
                                         "({:.2f} s of init after the last rank entered it)",
                                         generation_, ranks.size(), seconds, *init_seconds_)};
}

// Arms the deadline when the last rank entered the judged init round; a later firing with
// an older serial is ignored, so disarming needs no timer of its own.
// The deadline is suspended while a person holds a rank in a debugger (the others wait for
// it by design) and armed afresh, with its whole length, once no rank is held.
JobPolicy::Decisions JobPolicy::recheck_init_deadline() {
  const bool applies = tracker_.deadline_applies() && !tracker_.any_in_debugger();
  if (applies == deadline_armed_) return {};
  deadline_armed_ = applies;
  if (!applies) return {};
  ++deadline_serial_;
  return {ArmInitDeadline{generation_, deadline_serial_, timeout_s_}};
}

JobPolicy::Decisions JobPolicy::on_init_deadline(long generation, int serial, TimePoint now) {
  if (generation != generation_ || serial != deadline_serial_ || !deadline_armed_ || phase_ != JobPhase::Running)
    return {};
  auto failure = init_timeout_failure();
  if (!failure) return {};
  return on_worker_failed(failure->failure.node_rank, generation_, *failure, now);
}

// A failure the master itself observed for one rank (deadlines), in the shape a node reports.
FailureReport JobPolicy::failure_of_rank(int rank, FailureKind kind, std::string detail) const {
  const TrackedRank& t = tracker_.ranks()[static_cast<std::size_t>(rank)];
  FailureReport r;
  r.failure.node_rank = t.node;
  r.failure.global_rank = rank;
  r.failure.local_rank = rank;
  for (const auto& n : nodes_) {
    if (n.node_rank == t.node) r.host = n.facts.hostname;
    if (n.node_rank < t.node) r.failure.local_rank -= n.facts.nproc;
  }
  r.failure.pid = t.last.pid;
  r.failure.phase = FailurePhase::Init;
  r.failure.kind = kind;
  r.failure.detail = std::move(detail);
  return r;
}

std::optional<FailureReport> JobPolicy::init_timeout_failure() const {
  std::vector<int> hung = tracker_.ranks_in_judged_init();
  if (hung.empty()) return std::nullopt;
  return failure_of_rank(
      hung.front(), FailureKind::InitTimeout,
      fmt::format("{} still in init {} after the last rank of the job entered init — the group's init deadline ({}; "
                  "set timeout.base_s / timeout.min_s / timeout.max_s to change it)",
                  name_ranks(hung, tracker_), human_duration(timeout_s_), timeout_explained_));
}

JobPolicy::Decisions JobPolicy::on_worker_failed(int node, long generation, const FailureReport& report,
                                                 TimePoint now) {
  if (generation != generation_ || phase_ == JobPhase::Ended || phase_ == JobPhase::Joining) return {};
  // A node speaks only for its own ranks: a report naming another node's rank (a bug, or a
  // peer that joined to steer the job) must not restart or stop anything.
  if (!tracker_.holds(node, report.failure.global_rank))
    return {Log{Severity::Warn,
                fmt::format("ignored a failure report from node {} ({}) about rank {}, which is not one of its ranks "
                            "in generation {}",
                            node, host_of(node), report.failure.global_rank, generation_)}};
  ++failure_count_;
  last_error_by_node_[node] = describe_failure_line(report);
  if (mentions_port_in_use(report.failure)) port_at_fault_ = true;
  // Rank 0 hosting its store on the launcher's own port fails at once, often before another
  // rank's store client is seen connecting there: the same mistake, named the same way.
  if (failed_to_bind_port(report.failure, rendezvous_port_) && foreign_store_note_.empty())
    foreign_store_note_ = store_on_rendezvous_port_note(
        fmt::format("rank {} could not host its c10d TCPStore on port {}, ddplaunch's rendezvous port (every other "
                    "rank's c10d TCPStore client would connect to the launcher there)",
                    report.failure.global_rank, rendezvous_port_),
        rendezvous_port_);
  const bool first_of_generation = !first_failure_;
  if (!first_failure_) first_failure_ = report;
  Decisions out{Log{Severity::Error, "failure: " + describe_failure_line(report)}};
  if (phase_ != JobPhase::Running) return out;  // this generation's fate is decided already
  // Init failures that keep starting on one node: replace the node, not restart it again.
  if (membership_ && first_of_generation && is_init_failure(report.failure)) {
    MembershipChange change = membership_->on_first_init_failure(node, describe_failure_line(report), now);
    if (change.kind != MembershipChange::Kind::None) {
      Decisions changed = apply_membership_change(change);
      out.insert(out.end(), changed.begin(), changed.end());
      return out;
    }
  }
  Decisions decided = decide_on_failure(report);
  out.insert(out.end(), decided.begin(), decided.end());
  return out;
}

JobPolicy::Decisions JobPolicy::decide_on_failure(const FailureReport& report) {
  const WorkerFailure& f = report.failure;
  const RestartSettings& r = settings_.restart;
  // Only a failure inside init spends the automatic init budget; a program's own error (in
  // setup, or an exception of its making inside init) restarts like a runtime failure, only
  // with --max-restarts (DESIGN.md "Phases of a worker").
  const bool init = is_init_failure(f);
  const bool program_error_in_init = f.phase == FailurePhase::Init && !init && f.kind != FailureKind::SpawnFailed &&
                                     f.kind != FailureKind::Hang;
  const bool kind_allowed = f.kind != FailureKind::SpawnFailed &&
                            (init ? r.on_init_failure : r.on_runtime_failure) &&
                            (f.kind != FailureKind::Hang || settings_.hang_action == HangAction::Restart);
  const bool from_init_budget = init && init_restarts_used_ < r.init_restarts;
  const bool from_any_budget = any_restarts_used_ < r.max_restarts;
  // The same rank failing with the same error in the same phase as in the previous
  // generation is deterministic: the automatic budget does not retry it blindly.
  const std::string this_error = error_line(f);
  const bool repeated = previous_failure_ && previous_failure_->rank == f.global_rank &&
                        previous_failure_->phase == f.phase && previous_failure_->generation + 1 == generation_ &&
                        !this_error.empty() && previous_failure_->error == this_error &&
                        f.kind != FailureKind::InitTimeout && f.kind != FailureKind::Hang;
  const bool stop_repeat = repeated && r.max_restarts == 0 && from_init_budget;
  if (!kind_allowed || !(from_init_budget || from_any_budget) || stop_repeat) {
    std::string why =
        f.kind == FailureKind::SpawnFailed ? "the program could not be started (not restartable)"
        : f.kind == FailureKind::Hang && settings_.hang_action != HangAction::Restart
            ? "hang.action is stop (auto without --max-restarts); --hang-action restart restarts"
        : !kind_allowed ? fmt::format("restart.restart_on does not include {}", init ? "init" : "runtime")
        : stop_repeat
            ? fmt::format("rank {} failed with the same error during {} in generations {} and {} ({}): it is "
                          "deterministic, another attempt would fail alike; --max-restarts N retries it anyway",
                          f.global_rank, failure_phase_name(f.phase), generation_ - 1, generation_, this_error)
        : init ? fmt::format("all {} automatic init restarts and all {} --max-restarts used", r.init_restarts,
                             r.max_restarts)
        : f.phase == FailurePhase::Setup || program_error_in_init
            ? fmt::format("the program failed with its own error during {} (not an init failure: no automatic "
                          "restart); {} --max-restarts used of {}",
                          failure_phase_name(f.phase), any_restarts_used_, r.max_restarts)
            : fmt::format("all {} --max-restarts used (runtime failures restart only with --max-restarts)",
                          r.max_restarts);
    Decisions out{Log{Severity::Error, "not restarting: " + why}};
    Decisions stop = order_stop(failure_exit_code(f), describe_failure_line(report));
    stopping_for_failure_ = true;
    out.insert(out.end(), stop.begin(), stop.end());
    return out;
  }
  if (from_init_budget) ++init_restarts_used_;
  else ++any_restarts_used_;
  if (init) ++init_failure_restarts_;
  previous_failure_ = RememberedFailure{generation_, f.global_rank, f.phase, this_error};
  double delay = std::min(r.backoff_max_s, r.backoff_s * integer_power(2.0, restarts_used() - 1));
  if (delay > 0 && r.jitter > 0) delay += std::uniform_real_distribution<double>(0, delay * r.jitter)(rng_);
  const int budget = (init ? r.init_restarts : 0) + r.max_restarts;
  phase_ = JobPhase::RestartPending;
  restart_reason_ = describe_failure_line(report);
  return {Log{Severity::Warn, fmt::format("restarting the whole group on every node: generation {} (restart {} of {}) "
                                          "after {:.2f} s, because {}",
                                          generation_ + 1, restarts_used(), budget, delay, restart_reason_)},
          ScheduleRestart{generation_ + 1, delay}};
}

JobPolicy::Decisions JobPolicy::on_backoff_elapsed(long generation) {
  if (phase_ != JobPhase::RestartPending || generation != generation_ + 1) return {};  // stopped meanwhile
  phase_ = JobPhase::Rejoining;
  generation_ = generation;
  for (auto& [node, state] : node_states_)
    if (state == NodeStanding::Finished) state = NodeStanding::Active;
  return {OrderRestart{generation, restart_reason_, next_members(), last_planned_members()}};
}

JobPolicy::Decisions JobPolicy::order_stop(int exit_code, const std::string& reason) {
  phase_ = JobPhase::Stopping;
  stop_exit_code_ = exit_code;
  Decisions out{OrderStop{generation_, exit_code, reason}};
  // Stopped in a restart backoff after every node had finished its generation: no node will
  // report finishing again, so nothing else would ever end the job.
  if (!node_states_.empty() && active_nodes() == 0) {
    Decisions end = end_job(exit_code);
    out.insert(out.end(), end.begin(), end.end());
  }
  return out;
}

JobPolicy::Decisions JobPolicy::on_node_finished(int node, long generation, int exit_code) {
  if (generation != generation_ || phase_ == JobPhase::Ended) return {};
  return finish_node(node, NodeStanding::Finished, exit_code);
}

JobPolicy::Decisions JobPolicy::finish_node(int node, NodeStanding state, int exit_code) {
  auto it = node_states_.find(node);
  if (it == node_states_.end() || it->second != NodeStanding::Active) return {};
  it->second = state;
  if (exit_code != 0 && finished_exit_code_ == 0) finished_exit_code_ = exit_code;
  if (active_nodes() > 0) return {};
  switch (phase_) {
    case JobPhase::Running: return end_job(finished_exit_code_);  // every worker ended by itself
    case JobPhase::Stopping: return end_job(stop_exit_code_);
    default: return {};  // a restart is on its way
  }
}

JobPolicy::Decisions JobPolicy::on_node_problem(int node, long generation, const std::string& message, int exit_code) {
  if (phase_ == JobPhase::Ended || generation > generation_) return {};
  // A problem is a failure whatever code it names: it can never end the job as a success.
  if (exit_code == 0) exit_code = 1;
  last_error_by_node_[node] = message;
  Decisions out{Log{Severity::Error, fmt::format("node {}: {}", node, message)}};
  if (phase_ == JobPhase::Stopping) return out;
  Decisions stop = order_stop(exit_code, fmt::format("node {}: {}", node, message));
  out.insert(out.end(), stop.begin(), stop.end());
  return out;
}

JobPolicy::Decisions JobPolicy::end_job(int exit_code) {
  phase_ = JobPhase::Ended;
  Decisions out;
  if (exit_code != 0 && first_failure_)
    out.push_back(Log{Severity::Error, describe_root_cause(*first_failure_, failure_count_ - 1, generation_, budget_text()) +
                                           (foreign_store_note_.empty() ? "" : "  note: " + foreign_store_note_ + "\n")});
  else if (exit_code == 0 && !settings_.doctor)
    out.push_back(Log{Severity::Info, fmt::format("job succeeded: {} node(s), generation {}, {} restart(s){}", nodes_.size(),
                                                  generation_, restarts_used(),
                                                  membership_restarts_ > 0 ? fmt::format(", {} membership change(s)", membership_restarts_) : "")});
  out.push_back(EndJob{exit_code});
  return out;
}

std::string JobPolicy::budget_text() const {
  const RestartSettings& r = settings_.restart;
  return fmt::format("{} of {} (automatic init restarts {} of {}, --max-restarts {} of {})", restarts_used(),
                     restart_budget(), init_restarts_used_, r.init_restarts, any_restarts_used_, r.max_restarts);
}

JobPolicy::Decisions JobPolicy::on_tick(TimePoint now) {
  if (membership_ && phase_ != JobPhase::Ended) {  // the last call, the wait for a launcher
    MembershipChange change = membership_->on_tick(now);
    if (change.kind != MembershipChange::Kind::None) return apply_membership_change(change);
  }
  if (phase_ != JobPhase::Running) return {};
  if (probe_.overdue(now)) return conclude_probe();  // the nodes that did not report count as failures
  Decisions out;
  if (settings_.setup_timeout_s > 0) {
    auto limit = std::chrono::milliseconds(static_cast<long long>(settings_.setup_timeout_s * 1000));
    auto late = tracker_.in_setup_longer_than(limit, now);
    if (!late.empty()) {
      auto failure = failure_of_rank(late.front(), FailureKind::SetupTimeout,
                                     fmt::format("{} still in setup after {} (setup_timeout_s, which you set; 0 = unbounded)",
                                                 name_ranks(late, tracker_), human_duration(settings_.setup_timeout_s)));
      return on_worker_failed(failure.failure.node_rank, generation_, failure, now);
    }
  }
  auto waiting = tracker_.waiting();
  if (!waiting) return out;
  const auto waited = now - waiting->since;
  if (waited < settings_.wait_report_first || now - last_wait_report_ < settings_.wait_report_every) return out;
  last_wait_report_ = now;
  const TrackedRank& behind = tracker_.ranks()[static_cast<std::size_t>(waiting->behind.front())];
  std::string where = behind.last.phase == RankPhase::Setup ? "still in setup" : "not in init yet";
  out.push_back(Log{Severity::Info,
                    fmt::format("{} rank(s) wait in init for {}, {} after {} (not a failure: the init deadline starts "
                                "when every rank has entered init)",
                                waiting->waiting, name_ranks(waiting->behind, tracker_), where,
                                human_duration(std::chrono::duration<double>(now - behind.since).count()))});
  return out;
}

}  // namespace ddplaunch

namespace ddplaunch {

JobPolicy::Decisions JobPolicy::on_doctor_report(int node, bool ok, const std::string& nic, const std::string& problems) {
  if (!settings_.doctor || phase_ != JobPhase::Running) return {};
  doctor_rows_[node] = DoctorRow{ok, nic, problems};
  if (doctor_rows_.size() < nodes_.size()) return {};
  bool all_ok = probe_refusal_.empty();
  for (const auto& [n, row] : doctor_rows_) all_ok = all_ok && row.ok;
  std::string ring;
  if (!probe_.links().empty())
    ring = "peer probe (each node to its ring neighbour; every pair on small jobs):\n" +
           preflight::render_ring_table(probe_.links()) +
           (probe_refusal_.empty() ? probe_summary_ : "peer probe: FAIL: " + probe_refusal_) + "\n";
  std::string table = render_doctor_table(nodes_, doctor_rows_, worker_port_, timeout_explained_, all_ok, ring);
  Decisions out{PrintTable{table}};
  Decisions end = end_job(all_ok ? 0 : 1);
  out.insert(out.end(), end.begin(), end.end());
  return out;
}

}  // namespace ddplaunch
