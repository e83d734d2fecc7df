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
#include "log_setup.h"

namespace ddplaunch {

namespace {
std::chrono::milliseconds ms(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}
constexpr int kConfigErrorExit = 2;
}  // namespace

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

std::string NodeAgent::start() {
  if (std::string error = status_.open(); !error.empty()) return error;
  const LaunchConfig& c = plan_.config;
  int port = plan_.rendezvous_port;
  if (plan_.host_server) {
    CoordinatorSettings settings;
    settings.config = c;
    settings.worker_master_addr = plan_.master_ip;
    settings.master_is_loopback = plan_.master_ip.rfind("127.", 0) == 0 || plan_.master_ip == "::1";
    settings.worker_bind_address = c.standalone ? "127.0.0.1" : "0.0.0.0";
    settings.doctor = plan_.doctor;
    coordinator_ = std::make_unique<JobCoordinator>(io_, settings);
    rendezvous::ServerOptions options;
    options.job_id = c.job_id;
    options.expected_nodes = c.nodes;
    options.token = c.token;
    options.join_timeout = ms(c.join_timeout_s);
    options.heartbeat_interval = ms(c.heartbeat_interval_s);
    options.heartbeat_timeout = ms(c.heartbeat_timeout_s);
    options.launcher_version = plan_.facts.launcher_version;
    rendezvous::ServerCallbacks callbacks;
    callbacks.plan = [this](std::uint64_t g, const std::vector<rendezvous::NodeRecord>& nodes) {
      return coordinator_->plan(g, nodes);
    };
    callbacks.on_message = [this](int node, const rendezvous::Message& m) { coordinator_->on_message(node, m); };
    callbacks.on_node_lost = [this](const rendezvous::NodeRecord& n, const std::string& why) {
      coordinator_->on_node_lost(n, why);
    };
    callbacks.on_progress = [](int joined, int expected, const std::vector<std::string>& missing) {
      spdlog::info("waiting for nodes: {}/{} joined (missing: {})", joined, expected, fmt::join(missing, ", "));
    };
    callbacks.on_join_timeout = [c](const std::vector<std::string>& missing) {
      spdlog::error("join timeout after {:g} s: missing {}. Check that those nodes run ddplaunch with the same "
                    "--master, --job-id and --nodes, and can reach this node's rendezvous port",
                    c.join_timeout_s, fmt::join(missing, ", "));
    };
    callbacks.on_refused = [](const std::string& peer, const std::string& reason) {
      spdlog::warn("rendezvous: dropped {}: {}", peer, reason);
    };
    callbacks.status_text = [this]() { return coordinator_->status_text(); };
    server_ = std::make_unique<rendezvous::Server>(io_, options, callbacks);
    coordinator_->attach(*server_);
    std::string bind = c.standalone ? "127.0.0.1" : "";
    if (std::string error = server_->listen(bind, static_cast<std::uint16_t>(port)); !error.empty())
      return fmt::format("cannot host the rendezvous on port {}: {}", port, error);
    port = server_->port();
    if (!c.standalone) spdlog::info("hosting the rendezvous on port {} for {} node(s)", port, c.nodes);
  }

  rendezvous::ClientOptions options;
  options.job_id = c.job_id;
  options.token = c.token;
  options.host = plan_.master_ip;
  options.port = static_cast<std::uint16_t>(port);
  options.connect_timeout = ms(c.connect_timeout_s);
  options.join_timeout = ms(c.join_timeout_s);
  options.heartbeat_interval = ms(c.heartbeat_interval_s);
  options.heartbeat_timeout = ms(c.heartbeat_timeout_s);
  rendezvous::ClientCallbacks callbacks;
  callbacks.on_assignment = [this](const rendezvous::Assignment& a) { on_assignment(a); };
  callbacks.on_refused = [this](const std::string& reason) {
    spdlog::error("the master refused this node: {}", reason);
    lost_master_ = true;
    if (supervisor_.active()) supervisor_.stop(ms(plan_.config.grace_s));
    else finish(kConfigErrorExit);
  };
  callbacks.on_message = [this](const rendezvous::Message& m) { on_master_message(m); };
  callbacks.on_lost = [this](const std::string& why) { on_lost(why); };
  callbacks.on_progress = [this](int joined, int expected, const std::vector<std::string>& missing) {
    if (!plan_.host_server)
      spdlog::info("waiting for nodes: {}/{} joined (missing: {})", joined, expected, fmt::join(missing, ", "));
  };
  client_ = std::make_unique<rendezvous::Client>(io_, options, callbacks);
  rendezvous::NodeFacts facts = plan_.facts;
  facts.requested_node_rank = plan_.host_server ? 0 : c.node_rank;
  client_->join(facts);
  if (!plan_.host_server) watch_join();
  wait_for_signals();
  return {};
}

// While this node has not joined, probe the master the way the job will use it (TCP, no
// ICMP) and say why it cannot get in. A master that never answers (blackholed, wrong
// address) fails the node after three probes instead of waiting out the join timeout;
// a refused connection is normal while node 0 starts, unless the master is this
// machine's own loopback on a multi-node job: the classic MASTER_ADDR=127.0.0.1 mistake.
void NodeAgent::watch_join() {
  const double interval = std::max(2.0, plan_.config.connect_timeout_s);
  join_timer_.expires_after(ms(interval));
  join_timer_.async_wait([this, interval](const boost::system::error_code& ec) {
    if (ec || finished_ || node_rank_ >= 0) return;
    if (!client_->local_address().empty()) {  // connected: waiting for the other nodes
      unanswered_probes_ = refused_probes_ = 0;
      watch_join();
      return;
    }
    const auto probe_timeout = std::min(ms(plan_.config.connect_timeout_s), std::chrono::milliseconds(2000));
    auto probe = preflight::probe_tcp(plan_.master_ip, plan_.rendezvous_port, probe_timeout);
    if (probe.ok()) {
      unanswered_probes_ = refused_probes_ = 0;
    } else if (probe.status == preflight::ProbeStatus::Refused) {
      ++refused_probes_;
      unanswered_probes_ = 0;
    } else {
      ++unanswered_probes_;
    }
    const bool loopback = preflight::is_loopback(plan_.master_ip) && plan_.config.nodes > 1;
    if (!probe.ok())
      spdlog::warn("cannot reach the master {}:{} yet: {} — retrying until the join timeout ({:g} s)",
                   plan_.master_host, plan_.rendezvous_port, probe.message, plan_.config.join_timeout_s);
    if (unanswered_probes_ >= 3) {
      spdlog::error("giving up: the master {} ({}:{}) has not answered TCP for {:.0f} s. Check --master (node 0's "
                    "address and rendezvous port), that node 0 is running, and that no firewall drops the port",
                    plan_.master_host, plan_.master_ip, plan_.rendezvous_port, 3 * interval);
      finish(1);
      return;
    }
    if (loopback && refused_probes_ >= 3) {
      spdlog::error("giving up: the master {} is this machine's loopback and nothing listens on port {} here. On a "
                    "multi-node job every node must reach node 0 by a routable address: pass --master <node 0's "
                    "IP or name>:{} (the classic MASTER_ADDR=127.0.0.1 mistake)",
                    plan_.master_ip, plan_.rendezvous_port, plan_.rendezvous_port);
      finish(kConfigErrorExit);
      return;
    }
    watch_join();
  });
}

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
  if (supervisor_.active()) supervisor_.stop(ms(plan_.config.grace_s));
  else if (node_rank_ < 0) finish(code);  // not joined yet: nothing to wait for
  // Whatever the master does, this node exits within grace + a bound.
  exit_timer_.expires_after(ms(plan_.config.grace_s + 5));
  exit_timer_.async_wait([this, code](const boost::system::error_code& ec) {
    if (!ec && !finished_) finish(code);
  });
  exit_code_ = code;
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
    report_problem(problem, kConfigErrorExit);
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

void NodeAgent::run_doctor_checks(const rendezvous::Assignment& a) {
  std::vector<std::string> problems;
  std::string ifname;
  if (std::string problem = check_socket_ifnames(ifname); !problem.empty()) problems.push_back(problem);
  client_->send(messages::make_message(messages::kNodeReport, generation_,
                                       {{"host", plan_.hostname},
                                        {"address", a.address_seen_by_master},
                                        {"nic", ifname.empty() ? "-" : ifname},
                                        {"gpus", std::to_string(plan_.gpu_count)},
                                        {"nccl", plan_.facts.nccl_version.empty() ? "-" : plan_.facts.nccl_version},
                                        {"ok", problems.empty() ? "1" : "0"},
                                        {"problems", fmt::format("{}", fmt::join(problems, "; "))}}));
}

void NodeAgent::report_problem(const std::string& message, int exit_code) {
  spdlog::error("{}", message);
  exit_code_ = exit_code;
  client_->send(messages::make_message(messages::kNodeProblem, generation_,
                                       {{"message", message}, {"exit_code", std::to_string(exit_code)}}));
}

void NodeAgent::on_master_message(const rendezvous::Message& m) {
  if (m.type == messages::kRestart) {
    long next = static_cast<long>(m.generation);
    spdlog::warn("master ordered a group restart (generation {}): {}", next, messages::field(m, "reason"));
    rejoin_generation_ = next;
    if (supervisor_.active()) supervisor_.stop(ms(plan_.config.grace_s));
    else {
      rejoin_generation_.reset();
      client_->rejoin(static_cast<std::uint64_t>(next));
    }
  } else if (m.type == messages::kStop) {
    if (!plan_.host_server) spdlog::error("master stopped the job: {}", messages::field(m, "reason"));
    stop_generation_ = static_cast<long>(m.generation);
    rejoin_generation_.reset();
    if (supervisor_.active()) supervisor_.stop(ms(plan_.config.grace_s));
    else client_->send(messages::encode_node_finished(*stop_generation_, exit_code_ == 1 ? 0 : exit_code_, "stopped"));
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
  spdlog::error("lost the master ({}:{}): {}. Stopping this node's workers.", plan_.master_host, plan_.rendezvous_port,
                why);
  if (supervisor_.active()) supervisor_.stop(ms(plan_.config.grace_s));
  else finish(1);
}

void NodeAgent::on_group_finished(const GroupOutcome& outcome) {
  send_worker_states();
  if (lost_master_) {
    finish(exit_code_ == kConfigErrorExit ? kConfigErrorExit : 1);
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
  if (interrupted_) code = exit_code_;
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
