// NodeAgent: wiring of rendezvous, supervisor, status channel and signals for one node.
#include "agent/node_agent.h"

#include <unistd.h>

#include <csignal>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "agent/launcher_messages.h"
#include "agent/root_cause.h"
#include "ddplaunch/preflight/env_conflicts.h"
#include "ddplaunch/preflight/interfaces.h"
#include "ddplaunch/preflight/resolve.h"
#include "ddplaunch/preflight/socket_ifname.h"
#include "ddplaunch/preflight/tcp_probe.h"
#include "exit_codes.h"
#include "log_setup.h"
#include "time_units.h"

namespace ddplaunch {

NodeAgent::NodeAgent(boost::asio::io_context& io, OrphanGuard& guard, NodePlan plan)
    : io_(io),
      guard_(guard),
      plan_(std::move(plan)),
      signals_(io, SIGINT, SIGTERM, SIGCHLD),
      exit_timer_(io),
      state_timer_(io),
      join_timer_(io),
      terminal_(io),
      status_(io, [this](const contract::StatusMessage& m) { supervisor_.handle_status(m); }),
      supervisor_(io, guard,
                  GroupCallbacks{
                      .on_failure =
                          [this](const WorkerFailure& f) {
                            if (client_) client_->send(messages::encode_failure(generation_, f, plan_.hostname));
                            send_worker_states();
                          },
                      .on_initialized = [this](const Worker&) { send_worker_states(); },
                      .on_paused =
                          [this](const Worker& w) {
                            spdlog::warn(
                                "rank {} is paused before its first instruction on {} (pid {}). Attach with:  gdb -p {}"
                                "   — then continue it; send SIGCONT to ddplaunch (kill -CONT {}) to resume every "
                                "paused rank, or press Enter here",
                                w.global_rank, plan_.hostname, w.pid, w.pid, getpid());
                            wait_for_enter();
                          },
                      .on_finished = [this](const GroupOutcome& o) { on_group_finished(o); },
                      .drain_status = [this]() { status_.drain(); },
                  }) {
  signals_.add(SIGHUP);
  signals_.add(SIGCONT);
}

NodeAgent::~NodeAgent() = default;

void NodeAgent::wait_for_signals() {
  signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (ec || finished_) return;
    on_signal(signal);
    // on_signal may have finished the node (SIGCHLD of the last worker after the master was
    // lost); waiting again would keep io.run() from ever returning.
    if (!finished_) wait_for_signals();
  });
}

void NodeAgent::on_signal(int signal) {
  if (signal == SIGCHLD) {
    supervisor_.handle_child_exit();
    return;
  }
  if (signal == SIGCONT) {
    supervisor_.resume_paused();
    send_worker_states();
    return;
  }
  const int code = 128 + signal;
  if (interrupted_) {  // second Ctrl-C: no more grace
    spdlog::warn("{} again: killing workers now", signal_name(signal));
    supervisor_.stop(std::chrono::milliseconds(0));
    if (!supervisor_.active()) finish(code);
    return;
  }
  interrupted_ = true;
  spdlog::warn("received {}: stopping this node's workers (SIGTERM, SIGKILL after {:g} s) and telling the master",
               signal_name(signal), plan_.config.grace_s);
  if (client_)
    client_->send(messages::make_message(
        messages::kNodeProblem, generation_,
        {{"message", fmt::format("interrupted by {} on {}", signal_name(signal), plan_.hostname)},
         {"exit_code", std::to_string(code)}}));
  stop_generation_ = generation_;
  if (supervisor_.active()) supervisor_.stop(seconds_to_ms(plan_.config.grace_s));
  else if (node_rank_ < 0) return finish(code);  // not joined yet: nothing to wait for
  // Whatever the master does, this node exits within grace + a bound.
  exit_timer_.expires_after(seconds_to_ms(plan_.config.grace_s + 5));
  exit_timer_.async_wait([this, code](const boost::system::error_code& ec) {
    if (!ec && !finished_) finish(code);
  });
  local_problem_code_ = code;
}

NodeAssignment NodeAgent::to_node_assignment(const rendezvous::Assignment& a, const std::string& ifname) const {
  NodeAssignment n;
  n.node_rank = a.node_rank;
  n.node_count = a.node_count;
  n.rank_offset = a.rank_offset;
  n.world_size = a.world_size;
  n.local_world_size = plan_.nproc;
  n.master_addr = a.worker_master_addr;
  n.master_port = a.worker_master_port;
  n.timeout_s = a.timeout_s;
  n.generation = static_cast<long>(a.generation);
  n.max_restarts = plan_.config.restart.max_restarts;
  n.run_id = a.run_id;
  n.role = plan_.config.role;
  n.job_id = plan_.config.job_id;
  n.status_socket = status_.path();
  n.socket_ifname = ifname;
  return n;
}

std::string NodeAgent::check_socket_ifnames(std::string& selected) {
  if (plan_.config.nodes <= 1) return {};
  auto interfaces = preflight::list_interfaces();
  if (!interfaces) return "cannot list network interfaces: " + interfaces.error;
  std::string local = client_->local_address();
  std::string route = preflight::interface_for_address(local, *interfaces).value_or("");
  bool user_set = false;
  for (const char* variable : {contract::kNcclSocketIfname, contract::kGlooSocketIfname}) {
    auto it = plan_.base_env.find(variable);
    if (it == plan_.base_env.end()) continue;
    user_set = true;
    auto outcome = preflight::check_socket_ifname(variable, it->second, *interfaces, route, plan_.master_ip);
    if (!outcome) return outcome.message;
  }
  if (!user_set && !route.empty()) {
    selected = route;
    spdlog::info("NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME unset: using {} ({}), the interface the rendezvous "
                 "connection to the master uses",
                 route, local);
  }
  return {};
}

void NodeAgent::on_assignment(const rendezvous::Assignment& a) {
  node_rank_ = a.node_rank;
  generation_ = static_cast<long>(a.generation);
  rejoin_generation_.reset();
  stop_generation_.reset();
  set_log_node(a.node_rank, a.node_count);
  if (plan_.doctor) {
    run_doctor_checks(a);
    return;
  }
  std::string ifname;
  if (std::string problem = check_socket_ifnames(ifname); !problem.empty()) {
    report_problem(problem, kExitConfigError);
    return;
  }
  GroupSpec spec;
  spec.program = plan_.config.program;
  spec.assignment = to_node_assignment(a, ifname);
  spec.base_env = plan_.base_env;
  spec.hostname = plan_.hostname;
  spec.log_dir = plan_.config.log_dir;
  spec.pause_ranks = plan_.config.pause_ranks;
  spec.init_grace_s = plan_.config.init_grace_s;
  if (!env_conflicts_reported_) {
    env_conflicts_reported_ = true;
    auto computed = build_worker_environment({}, spec.assignment, 0);
    auto conflicts = preflight::find_env_conflicts(plan_.base_env, computed);
    if (!conflicts.empty()) spdlog::warn("{}", preflight::render_env_conflicts(conflicts));
  }
  spdlog::info("generation {}: starting {} worker(s), global ranks {}..{} of {}", generation_, plan_.nproc,
               a.rank_offset, a.rank_offset + plan_.nproc - 1, a.world_size);
  supervisor_.start(spec);
  send_worker_states();
  schedule_state_reports();
}

void NodeAgent::send_worker_states() {
  if (!client_ || finished_) return;
  std::string states;
  for (const auto& w : supervisor_.workers())
    states += fmt::format("{} {} {}\n", w->global_rank, w->pid, messages::worker_state_name(*w));
  client_->send(messages::make_message(messages::kWorkerStates, generation_,
                                       {{"host", plan_.hostname}, {"states", states}}));
}

void NodeAgent::schedule_state_reports() {
  state_timer_.expires_after(std::chrono::seconds(2));
  state_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || finished_ || !supervisor_.active()) return;
    send_worker_states();
    schedule_state_reports();
  });
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
    if (ec || finished_) return;
    spdlog::info("resuming paused ranks");
    supervisor_.resume_paused();
    send_worker_states();
  });
}

void NodeAgent::run_doctor_checks(const rendezvous::Assignment&) {
  std::vector<std::string> problems;
  std::string ifname;
  if (std::string problem = check_socket_ifnames(ifname); !problem.empty()) problems.push_back(problem);
  if (auto user_choice = plan_.base_env.find(contract::kNcclSocketIfname); user_choice != plan_.base_env.end())
    ifname = user_choice->second;
  // Host, address, GPUs and versions are in the node facts the master already holds.
  client_->send(messages::make_message(messages::kNodeReport, generation_,
                                       {{"nic", ifname.empty() ? "-" : ifname},
                                        {"ok", problems.empty() ? "1" : "0"},
                                        {"problems", fmt::format("{}", fmt::join(problems, "; "))}}));
}

void NodeAgent::report_problem(const std::string& message, int exit_code) {
  spdlog::error("{}", message);
  local_problem_code_ = exit_code;
  client_->send(messages::make_message(messages::kNodeProblem, generation_,
                                       {{"message", message}, {"exit_code", std::to_string(exit_code)}}));
}

void NodeAgent::on_master_message(const rendezvous::Message& m) {
  if (m.type == messages::kRestart) {
    long next = static_cast<long>(m.generation);
    spdlog::warn("master ordered a group restart (generation {}): {}", next, messages::field(m, "reason"));
    rejoin_generation_ = next;
    if (supervisor_.active()) supervisor_.stop(seconds_to_ms(plan_.config.grace_s));
    else {
      rejoin_generation_.reset();
      client_->rejoin(static_cast<std::uint64_t>(next));
    }
  } else if (m.type == messages::kStop) {
    if (!plan_.host_server) spdlog::error("master stopped the job: {}", messages::field(m, "reason"));
    stop_generation_ = static_cast<long>(m.generation);
    rejoin_generation_.reset();
    if (supervisor_.active()) supervisor_.stop(seconds_to_ms(plan_.config.grace_s));
    else client_->send(messages::encode_node_finished(*stop_generation_, local_problem_code_, "stopped"));
  } else if (m.type == messages::kJobEnd) {
    finish(messages::int_field(m, "exit_code", 1));
  } else if (m.type == messages::kResume) {
    supervisor_.resume_paused();
    send_worker_states();
  }
}

void NodeAgent::on_lost(const std::string& why) {
  if (finished_) return;
  lost_master_ = true;
  if (node_rank_ < 0) {  // never got in: the master is unreachable or the job never formed
    spdlog::error("could not join the job at the master {}:{} — {}", plan_.master_host, plan_.rendezvous_port, why);
    finish(kExitConfigError);
    return;
  }
  spdlog::error("lost the master {}:{} — {} — stopping this node's workers", plan_.master_host, plan_.rendezvous_port,
                why);
  if (supervisor_.active()) supervisor_.stop(seconds_to_ms(plan_.config.grace_s));
  else finish(kExitFailure);
}

void NodeAgent::on_group_finished(const GroupOutcome& outcome) {
  send_worker_states();
  if (lost_master_) {
    finish(local_problem_code_ == kExitConfigError ? kExitConfigError : kExitFailure);
    return;
  }
  if (rejoin_generation_) {
    long next = *rejoin_generation_;
    rejoin_generation_.reset();
    client_->rejoin(static_cast<std::uint64_t>(next));
    return;
  }
  int code = 0;
  std::string summary = "all workers succeeded";
  for (const auto& [rank, status] : outcome.statuses) {
    if (status.success()) continue;
    code = status.shell_code();
    summary = fmt::format("rank {}: {}", rank, status.describe());
    break;
  }
  if (interrupted_) code = local_problem_code_;
  client_->send(messages::encode_node_finished(stop_generation_.value_or(generation_), code, summary));
}

void NodeAgent::finish(int exit_code) {
  if (finished_) return;
  finished_ = true;
  exit_code_ = exit_code;
  boost::system::error_code ignored;
  signals_.cancel(ignored);
  exit_timer_.cancel();
  state_timer_.cancel();
  join_timer_.cancel();
  terminal_.close(ignored);
  if (supervisor_.active()) supervisor_.stop(std::chrono::milliseconds(0));
  status_.close();
  if (client_) client_->close();
  if (server_) server_->close();  // flushes job_end to the other nodes, bounded
}

}  // namespace ddplaunch
