// NodeAgent: the node's state machine — one function per transition, top to bottom.
#include "agent/node_agent.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>

#include <boost/asio/post.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "agent/launcher_messages.h"
#include "agent/node_assignment.h"
#include "debug/debug_console.h"
#include "ddplaunch/preflight/env_conflicts.h"
#include "ddplaunch/preflight/resolve.h"
#include "ddplaunch/base/exit_codes.h"
#include "ddplaunch/base/overloaded.h"
#include "job_record.h"
#include "log_setup.h"
#include "policy/root_cause.h"
#include "supervise/outer_error_file.h"
#include "ddplaunch/base/time_units.h"

namespace ddplaunch {

namespace {
NodePolicySettings node_policy_settings(const NodePlan& plan) {
  NodePolicySettings s;
  s.host_chosen_by_address = plan.host_chosen_by_address;
  s.host_server = plan.host_server;
  s.grace_s = plan.config.grace_s;
  s.hostname = plan.hostname;
  s.master_host = plan.master_host;
  s.master_ip = plan.master_ip;
  s.rendezvous_port = plan.rendezvous_port;
  s.master_is_loopback = preflight::is_loopback(plan.master_ip);
  s.nodes = plan.config.nodes;
  s.join_timeout_s = plan.config.join_timeout_s;
  // etcd: a lost coordinator's lease expires, another launcher is elected and publishes its
  // address; then the join itself.
  if (etcd_enabled(plan.config)) s.coordinator_wait_s = plan.config.etcd.lease_ttl_s + plan.config.join_timeout_s;
  return s;
}
}  // namespace

NodeAgent::NodeAgent(boost::asio::io_context& io, OrphanGuard& guard, NodePlan plan)
    : io_(io),
      guard_(guard),
      plan_(std::move(plan)),
      signals_(io, SIGINT, SIGTERM),
      exit_timer_(io),
      join_timer_(io),
      terminal_(io),
      status_(io, [this](const contract::StatusMessage& m) { supervisor_.handle_status(m); }),
      supervisor_(io, guard,
                  GroupCallbacks{
                      .on_failure =
                          [this](const WorkerFailure& f) {
                            if (local_failure_generation_ != policy_.generation()) {
                              local_failure_ = f;
                              local_failure_generation_ = policy_.generation();
                            }
                            // Its last lines and the timeline first: the master has them before the failure.
                            follower_.flush();
                            rank_states_.send_timeline();
                            if (client_) client_->send(messages::encode(policy_.generation(), FailureReport{f, plan_.hostname}));
                          },
                      .on_phases_changed = [this]() { rank_states_.send_soon(); },
                      .on_paused = [this](const Worker& w) { on_paused(w); },
                      .on_finished = [this](const GroupOutcome& o) { on_group_finished(o); },
                      .drain_status = [this]() { status_.drain(); },
                      .on_debugger_stopped =
                          [this](const Worker& w, const debug::StopLocation& where, const std::string& reason) {
                            send_debug_message(messages::encode(
                                policy_.generation(), messages::DebugStopped{w.global_rank, w.local_rank, w.pid, plan_.hostname,
                                                                             where.file, where.function, where.code, reason,
                                                                             where.line}));
                          },
                      .on_debugger_output =
                          [this](const Worker& w, const std::string& lines, bool prompt) {
                            send_debug_message(
                                messages::encode(policy_.generation(), messages::DebugOutput{w.global_rank, lines, prompt}));
                          },
                      .on_debugger_left =
                          [this](const Worker& w) {
                            send_debug_message(messages::encode(policy_.generation(), messages::DebugResumed{w.global_rank}));
                          },
                      .on_followed_line = [this](int rank, std::string_view line) { follower_.on_line(rank, line); },
                  }),
      follower_(io,
                [this](messages::RankOutput out) {
                  if (client_) client_->send(messages::encode(policy_.generation(), out));
                },
                [this](std::set<int> ranks) { supervisor_.follow_ranks(std::move(ranks)); }),
      rank_states_(io, plan_.hostname, plan_.config.log_dir,
                   RankStateSource{
                       .connected = [this] { return client_ != nullptr; },
                       .send = [this](const rendezvous::Message& m) { client_->send(m); },
                       .workers = [this]() -> const std::vector<std::shared_ptr<Worker>>& { return supervisor_.workers(); },
                       .generation = [this] { return policy_.generation(); },
                       .may_report =
                           [this] {
                             return policy_.state() != NodeState::Finished && policy_.state() != NodeState::Joining;
                           },
                       .running = [this] { return policy_.state() == NodeState::Running && supervisor_.active(); },
                   }),
      tail_linger_timer_(io),
      peer_probe_(io, plan_,
                  PeerProbeHooks{
                      .wanted =
                          [this](long generation) {
                            return policy_.state() == NodeState::Probing && generation == policy_.generation() &&
                                   client_;
                          },
                      .send = [this](const rendezvous::Message& m) { client_->send(m); },
                  }),
      policy_(node_policy_settings(plan_)) {
  signals_.add(SIGHUP);
  signals_.add(SIGCONT);
  signals_.add(SIGUSR1);  // Slurm's --signal=USR1@120: forwarded, never fatal to the launcher
  signals_.add(SIGUSR2);
}

NodeAgent::~NodeAgent() {
  if (stacks_thread_.joinable()) stacks_thread_.join();  // bounded: every tool has a deadline
}

// ---- transitions ------------------------------------------------------------------------

// joining / rejoining → running: start this generation's workers (doctor: run the checks).
void NodeAgent::on_assignment(const rendezvous::Assignment& a) {
  const bool first = policy_.state() == NodeState::Joining;
  if (!policy_.take_assignment(static_cast<long>(a.generation))) return;
  if (etcd_) etcd_->seat().joined_run(a.run_nonce);
  node_rank_ = a.node_rank;
  set_log_node(a.node_rank, a.node_count);
  if (policy_.leave_spare()) {
    spdlog::warn("this hot spare takes the place of node {} in generation {} ({} node(s), world size {})", a.node_rank,
                 a.generation, a.node_count, a.world_size);
  }
  // The master runs the peer probe in generation 0 only (a launcher that joins a moved
  // coordinator later has nothing to probe for).
  if (first && a.generation == 0 && peer_probe_.start(a, policy_.generation())) {
    policy_.probing();  // workers start on the master's verdict
    return;
  }
  peer_probe_.close();
  start_generation(a, "");
}

// probing → running: every node probed its peers; the master chose the interface (or kept
// the user's). A refusal comes as a stop order instead.
void NodeAgent::on_probe_verdict(long generation, const std::string& ifname) {
  if (policy_.state() != NodeState::Probing || !peer_probe_.probing() || generation != policy_.generation()) return;
  start_generation(peer_probe_.end(), ifname);
}

void NodeAgent::start_generation(const rendezvous::Assignment& a, const std::string& probe_ifname) {
  policy_.running();
  if (plan_.doctor) return run_doctor_checks();
  std::string ifname;
  if (std::string problem = check_socket_ifnames(ifname, probe_ifname); !problem.empty())
    return report_problem(problem, kExitConfigError);
  GroupSpec spec;
  spec.program = plan_.config.program;
  spec.assignment = node_assignment(a, plan_, status_.path(), ifname, server_ ? server_->port() : plan_.rendezvous_port);
  spec.base_env = plan_.base_env;
  spec.hostname = plan_.hostname;
  spec.log_dir = plan_.config.log_dir;
  spec.pause_ranks = plan_.config.pause_ranks;
  spec.local_ranks_filter = plan_.config.local_ranks_filter;
  spec.ranks_filter = plan_.config.ranks_filter;
  spec.collapse_lines = plan_.config.collapse_output == CollapseOutput::On ||
                        (plan_.config.collapse_output == CollapseOutput::Auto && ::isatty(STDOUT_FILENO) == 1);
  spec.inherit_stdin = plan_.inherit_stdin;
  spec.init_grace_s = plan_.config.init_grace_s;
  spec.redirects = plan_.config.redirects;
  spec.tee = plan_.config.tee;
  spec.placement = plan_.placement;
  spec.virtual_local_rank = plan_.config.virtual_local_rank;
  if (!env_conflicts_reported_) {
    env_conflicts_reported_ = true;
    // Only the torchrun contract's keys are compared: a known (empty) torch version spares
    // this environment the torch/version.py search the workers' own need.
    NodeAssignment contract_only = spec.assignment;
    contract_only.torch_version = "";
    auto conflicts = preflight::find_env_conflicts(plan_.base_env, build_worker_environment({}, contract_only, 0));
    if (!conflicts.empty()) spdlog::warn("{}", preflight::render_env_conflicts(conflicts));
  }
  spdlog::info("generation {}: starting {} worker(s), global ranks {}..{} of {}", policy_.generation(), plan_.nproc,
               a.rank_offset, a.rank_offset + plan_.nproc - 1, a.world_size);
  supervisor_.start(spec);
  rank_states_.send_now();
  rank_states_.send_periodically();
}

void NodeAgent::on_restart_order(long generation, const std::string& reason) {
  carry_out(policy_.on_restart_order(generation, reason, supervisor_.active()));
}

void NodeAgent::on_stop_order(long generation, const std::string& reason) {
  if (policy_.state() != NodeState::Finished && policy_.state() != NodeState::Joining) stop_reason_ = reason;
  carry_out(policy_.on_stop_order(generation, reason, supervisor_.active()));
}

void NodeAgent::on_job_end(int exit_code) { carry_out(policy_.on_job_end(exit_code)); }

// Every worker ended by itself (the first failed rank names the node's status), or the stop
// this node ordered is complete.
void NodeAgent::on_group_finished(const GroupOutcome& outcome) {
  follower_.flush();
  rank_states_.send_now();
  int code = 0;
  std::string summary = "all workers succeeded";
  for (const auto& [rank, status] : outcome.statuses) {
    if (status.success()) continue;
    code = status.shell_code();
    summary = fmt::format("rank {}: {}", rank, status.describe());
    break;
  }
  carry_out(policy_.on_group_finished(static_cast<long>(outcome.generation), code, summary));
}

void NodeAgent::on_lost(const std::string& why, int exit_code) {
  carry_out(policy_.on_lost(why, exit_code, supervisor_.active()));
}

// joining → spare: the job has its nodes; this launcher waits idle (no join deadline) until
// the master gives it the slot of a lost or excluded node, or the job ends.
void NodeAgent::on_standby(const std::string& reason) {
  if (policy_.state() != NodeState::Joining || policy_.spare()) return;
  policy_.became_spare();
  spdlog::info("{} (`ddplaunch status --master ...` lists the membership)", reason);
  client_->wait_as_spare();
  join_timer_.cancel();
  peer_probe_.close();
}

void NodeAgent::on_dismissed(const std::string& reason) {
  carry_out(policy_.on_dismissed(reason, supervisor_.active()));
}

void NodeAgent::on_signal(int signal) {
  if (signal == SIGCONT) {
    supervisor_.resume_paused();
    return rank_states_.send_now();
  }
  if (signal == SIGUSR1 || signal == SIGUSR2) {  // e.g. checkpoint before preemption
    int sent = supervisor_.forward_signal(signal);
    spdlog::info("received {}: forwarded to {} worker process(es) on {}; the job goes on", signal_name(signal), sent,
                 plan_.hostname);
    return;
  }
  carry_out(policy_.on_interrupt(signal, supervisor_.active()));
}

// One handler per node decision: std::visit with Overloaded refuses to compile when a
// decision has no handler here.
void NodeAgent::carry_out(const NodePolicy::Decisions& decisions) {
  for (const auto& d : decisions) std::visit(Overloaded{
      [](const decision::Log& log) { log_decision(log); },
      [this](const node_decision::StopWorkers& stop) {
        supervisor_.stop(stop.now ? std::chrono::milliseconds(0) : seconds_to_ms(plan_.config.grace_s));
      },
      [this](const node_decision::Rejoin& rejoin) { client_->rejoin(static_cast<std::uint64_t>(rejoin.generation)); },
      [this](const node_decision::ReportFinished& report) {
        client_->send(messages::encode(report.generation, messages::NodeFinished{report.exit_code, report.summary}));
      },
      [this](const node_decision::ReportProblem& problem) {
        if (client_) client_->send(messages::encode(problem.generation, messages::NodeProblem{problem.text, problem.exit_code}));
      },
      [this](const node_decision::ArmExitTimer& timer) {
        exit_timer_.expires_after(seconds_to_ms(timer.seconds));
        exit_timer_.async_wait([this, code = timer.exit_code](const boost::system::error_code& ec) {
          if (!ec) carry_out(policy_.on_exit_timer(code));
        });
      },
      [this](const node_decision::Finish& end) { finish(end.exit_code); },
      [this](const node_decision::JoinCoordinator& join) {
        if (etcd_) etcd_->join_coordinator(join.after_s);
      },
      [this](const node_decision::JoinRendezvous& join) {
        if (join.as_node) {  // another launcher of this job hosts it here: this one is a node
          server_.reset();
          coordinator_.reset();
        }
        join_and_watch(server_ ? server_->port() : plan_.rendezvous_port);
      },
      [this](const node_decision::RetryHosting& retry) {
        join_timer_.expires_after(seconds_to_ms(retry.after_s));
        join_timer_.async_wait([this](const boost::system::error_code& ec) {
          if (!ec && !policy_.finished()) try_hosting();
        });
      },
      [this](const node_decision::ArmCoordinatorWait& wait) {
        if (etcd_)
          etcd_->wait_for_coordinator(wait.seconds, [this, serial = wait.serial] {
            carry_out(policy_.on_coordinator_wait_over(serial));
          });
      },
  }, d);
}

// The policy decided the node ends (it is Finished now): say so, release everything.
void NodeAgent::finish(int exit_code) {
  exit_code_ = exit_code;
  if (!plan_.doctor) {
    std::string where = node_rank_ >= 0 ? fmt::format("node {} ({})", node_rank_, plan_.hostname) : plan_.hostname;
    if (exit_code == 0) spdlog::info("{}: job succeeded", where);
    else
      spdlog::error("{}: job failed, exit code {}{}", where, exit_code,
                    policy_.host_server() || (etcd_ && node_rank_ < 0) ? ""  // etcd: never joined a coordinator
                    : etcd_ ? " — the coordinator's output has the root cause"
                            : " — the master's output has the root cause");
  }
  if (exit_code != 0) write_outer_error_file(exit_code);
  boost::system::error_code ignored;
  signals_.cancel(ignored);
  exit_timer_.cancel();
  rank_states_.stop();
  join_timer_.cancel();
  terminal_.close(ignored);
  if (debug_relay_) debug_relay_->close();
  for (auto& [rank, session] : gdb_sessions_) session->close();
  gdb_sessions_.clear();
  if (!job_record_.empty()) remove_job_record(job_record_);
  peer_probe_.close();
  follower_.close();
  supervisor_.close();
  status_.close();
  if (coordinator_) coordinator_->close();
  if (client_) client_->close();
  if (server_ && coordinator_ && coordinator_->tails_unread()) close_server_after_tails();
  else if (server_) server_->close();  // flushes job_end to the other nodes, bounded
  if (etcd_) etcd_->close(coordinator_ && coordinator_->job_ended());
}

// `ddplaunch tail` clients still have a followed rank's last lines to read: the master's
// rendezvous answers their polls a little longer (at most kTailLinger; job_end has gone out).
void NodeAgent::close_server_after_tails(int checks_left) {
  if (checks_left <= 0 || !coordinator_->tails_unread()) return server_->close();
  tail_linger_timer_.expires_after(kTailLinger / kTailLingerChecks);
  tail_linger_timer_.async_wait([this, checks_left](const boost::system::error_code&) {
    close_server_after_tails(checks_left - 1);
  });
}

// An outer agent (TorchX, Kubeflow, a scheduler) reads the root cause from the
// TORCHELASTIC_ERROR_FILE it gave this launcher, as torchrun's @record main writes it.
void NodeAgent::write_outer_error_file(int exit_code) {
  auto outer = plan_.base_env.find("TORCHELASTIC_ERROR_FILE");
  if (outer == plan_.base_env.end() || outer->second.empty()) return;
  OuterFailure f;
  f.exit_code = exit_code;
  if (local_failure_ && local_failure_generation_ == policy_.generation()) {
    f.message = describe_failure_line(FailureReport{*local_failure_, plan_.hostname});
    for (const auto& line : local_failure_->tail) f.details += line + "\n";
    f.child_error_file = supervisor_.error_file_of(local_failure_->global_rank);
  } else {
    f.message = !stop_reason_.empty() ? stop_reason_
                                      : fmt::format("ddplaunch: the job failed on {} with exit code {}", plan_.hostname,
                                                    exit_code);
  }
  if (std::string error = ::ddplaunch::write_outer_error_file(outer->second, f); !error.empty())
    spdlog::warn("could not write the root cause to TORCHELASTIC_ERROR_FILE: {}", error);
}

// ---- steps ------------------------------------------------------------------------------

// Orders from the master, one handler per kind.
void NodeAgent::on_master_message(const rendezvous::Message& m) {
  const long generation = static_cast<long>(m.generation);
  if (auto restart = messages::decode_restart(m)) return on_restart_order(generation, restart->reason);
  if (auto stop = messages::decode_stop(m)) return on_stop_order(generation, stop->reason);
  if (auto end = messages::decode_job_end(m)) return on_job_end(end->exit_code);
  if (auto verdict = messages::decode_probe_verdict(m)) return on_probe_verdict(generation, verdict->ifname);
  if (auto standby = messages::decode_standby(m)) {
    if (etcd_) etcd_->seat().joined_run(standby->run_nonce);
    return on_standby(standby->reason);
  }
  if (auto ask = messages::decode_collect_stacks(m)) return on_collect_stacks(ask->request);
  if (auto gdb = messages::decode_debug_attach_gdb(m)) return attach_gdb(gdb->rank);
  if (auto filter = messages::decode_output_filter(m)) {
    plan_.config.ranks_filter = filter->ranks;  // the next generations too
    return supervisor_.show_ranks(filter->ranks);
  }
  if (auto follow = messages::decode_follow_rank(m)) {
    if (!follower_.follow(follow->rank, follow->seconds)) return;
    for (const auto& w : supervisor_.workers())  // a new follower starts with the lines the rank printed last
      if (w->global_rank == follow->rank)
        for (const auto& line : w->tail) follower_.on_line(w->global_rank, line);
    return;
  }
  if (auto input = messages::decode_debug_input(m)) {
    if (auto session = gdb_sessions_.find(input->rank); session != gdb_sessions_.end()) {
      session->second->input(input->line);
      return;
    }
    if (!supervisor_.debugger_input(input->rank, input->line))
      spdlog::warn("a line for rank {}'s debugger was not delivered: that rank is no longer stopped in its debugger "
                   "on this node",
                   input->rank);
    return;
  }
  if (messages::kind_of(m) == messages::Kind::Resume) {
    supervisor_.resume_paused();
    rank_states_.send_now();
  }
}

void NodeAgent::report_problem(const std::string& message, int exit_code) {
  carry_out(policy_.on_local_problem(message, exit_code));
}

void NodeAgent::on_paused(const Worker& w) {
  spdlog::warn("rank {} is paused: from any terminal, `ddplaunch debug --job {} --master {} --gdb {}` attaches gdb to it "
               "through the job's debug console (with the job's token)",
               w.global_rank, plan_.config.job_id, job_master_, w.global_rank);
  spdlog::warn(
      "rank {} is paused before its first instruction on {} (pid {}). Attach with:  gdb -p {}"
      "   — then continue it; send SIGCONT to ddplaunch (kill -CONT {}) to resume every paused rank, or press Enter "
      "here",
      w.global_rank, plan_.hostname, w.pid, w.pid, getpid());
  wait_for_enter();
}

// Reads the terminal once (only when paused ranks exist): a line resumes them all.
void NodeAgent::wait_for_enter() {
  if (terminal_.is_open() || !isatty(STDIN_FILENO)) return;
  int fd = dup(STDIN_FILENO);
  if (fd < 0) return;
  terminal_.assign(fd);
  terminal_.async_read_some(boost::asio::buffer(terminal_buffer_), [this](const boost::system::error_code& ec, std::size_t) {
    boost::system::error_code ignored;
    terminal_.close(ignored);
    if (ec || policy_.state() == NodeState::Finished) return;
    spdlog::info("resuming paused ranks");
    supervisor_.resume_paused();
    rank_states_.send_now();
  });
}

void NodeAgent::wait_for_signals() {
  signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (ec || policy_.state() == NodeState::Finished) return;
    on_signal(signal);
    if (policy_.state() != NodeState::Finished) wait_for_signals();
  });
}

// ---- interactive debugging ---------------------------------------------------------------

void NodeAgent::send_debug_message(const rendezvous::Message& message) {
  if (client_) client_->send(message);
}

void NodeAgent::on_console_line(const std::string& line) {
  if (debug_relay_) debug_relay_->on_console_line(line);
}

void NodeAgent::record_job(int rendezvous_port) {
  if (!job_record_.empty() || plan_.doctor) return;
  const LaunchConfig& c = plan_.config;
  const std::string host = plan_.master_host.find(':') != std::string::npos ? "[" + plan_.master_host + "]" : plan_.master_host;
  JobRecord record{c.job_id, fmt::format("{}:{}", host, rendezvous_port), plan_.record_token ? c.token : "",
                   static_cast<long>(::getpid())};
  job_master_ = record.master;
  auto folder = write_job_record(record);
  if (!folder) {
    spdlog::warn("{} (`ddplaunch status|stacks|debug` then need --master and --job-id)", folder.error);
    return;
  }
  job_record_ = *folder;
  guard_.remove_at_exit(job_record_);  // even when the launcher is SIGKILLed
  if (policy_.host_server())
    spdlog::info("inspect: ddplaunch status|stacks|debug --job {}   (on this node; elsewhere add --master {})", c.job_id,
                 record.master);
}

// The master hosts the job's one debug console: its terminal (or the fan-out's), and the
// transcript `ddplaunch debug` reads.
void NodeAgent::start_debug_relay() {
  const LaunchConfig& c = plan_.config;
  std::string hint = fmt::format("`ddplaunch debug --job {} --master {}:{}`", c.job_id, plan_.master_host,
                                 server_ ? server_->port() : plan_.rendezvous_port);
  DebugRelay::Hooks hooks;
  hooks.send_to_node = [this](int node, const rendezvous::Message& m) {
    if (server_) server_->send(node, m);
  };
  hooks.end_job = [this](const debug::StoppedRank& r) {
    if (coordinator_) coordinator_->on_debugger_quit(r.generation, r.rank);
  };
  hooks.interrupt = [] { ::kill(::getpid(), SIGINT); };
  hooks.broadcast = [this](const rendezvous::Message& m) {
    if (server_) server_->broadcast(m);
  };
  debug_relay_ = std::make_unique<DebugRelay>(io_, plan_.console_place, std::move(hint), std::move(hooks),
                                              seconds_to_ms(c.unattended_stop_s));
}

// gdb on one of this node's ranks, relayed like its pdb would be. The rank is "debugging"
// (deadlines held) while gdb holds it.
void NodeAgent::attach_gdb(int rank) {
  const auto& workers = supervisor_.workers();
  auto found = std::find_if(workers.begin(), workers.end(), [&](const auto& w) { return w->global_rank == rank; });
  if (found == workers.end()) return;  // another node's rank
  std::shared_ptr<Worker> worker = *found;
  auto say = [this, rank](const std::string& text) {
    send_debug_message(messages::encode(policy_.generation(), messages::DebugOutput{rank, text + "\n", false}));
  };
  if (worker->status || worker->pid <= 0) return say(fmt::format("rank {} is not running: no gdb", rank));
  if (gdb_sessions_.count(rank)) return say(fmt::format("gdb is attached to rank {} already", rank));
  const long generation = policy_.generation();
  GdbSessionCallbacks callbacks;
  callbacks.on_first_prompt = [this, worker, generation](const std::string& lines) {
    worker->gdb_attached = true;
    send_debug_message(messages::encode(
        generation, messages::DebugStopped{worker->global_rank, worker->local_rank, worker->pid, plan_.hostname, "", "",
                                           "", std::string(debug::StoppedRank::kGdbReason), 0}));
    if (!lines.empty())
      send_debug_message(messages::encode(generation, messages::DebugOutput{worker->global_rank, lines, true}));
    rank_states_.send_now();
  };
  callbacks.on_output = [this, worker, generation](const std::string& lines, bool prompt) {
    send_debug_message(messages::encode(generation, messages::DebugOutput{worker->global_rank, lines, prompt}));
  };
  callbacks.on_exit = [this, worker, rank, generation] {
    worker->gdb_attached = false;
    send_debug_message(messages::encode(generation, messages::DebugResumed{rank}));
    rank_states_.send_now();
    boost::asio::post(io_, [this, rank] { gdb_sessions_.erase(rank); });  // not from inside its own callback
  };
  auto session = std::make_shared<GdbSession>(io_, worker->pid, std::move(callbacks));
  if (std::string error = session->start(); !error.empty()) return say(error);
  gdb_sessions_[rank] = session;
}

}  // namespace ddplaunch
