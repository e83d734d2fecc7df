// NodeAgent start-up: host the rendezvous (server + JobCoordinator, the debug console's
// relay) on the master node, join it as a client on every node and record the job, explain a
// master that cannot be reached, and the node's own checks once its assignment is known.
#include "ddplaunch/rendezvous/codec.h"
#include "agent/node_agent.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "agent/dropped_connections_log.h"
#include "agent/launcher_messages.h"
#include "agent/master_probe.h"
#include "debug/debug_console.h"
#include "ddplaunch/preflight/interfaces.h"
#include "ddplaunch/preflight/port_holder.h"
#include "ddplaunch/preflight/resolve.h"
#include "ddplaunch/preflight/socket_ifname.h"
#include "ddplaunch/rendezvous/printable.h"
#include "ddplaunch/base/exit_codes.h"
#include "job_record.h"
#include "output/join_progress.h"
#include "policy/node_checks.h"
#include "ddplaunch/base/time_units.h"

namespace ddplaunch {

std::string NodeAgent::start() {
  if (std::string error = status_.open(); !error.empty()) return error;
  guard_.remove_at_exit(status_.directory());  // even when the launcher is SIGKILLed
  if (etcd_enabled(plan_.config)) return start_etcd();
  wait_for_signals();
  if (!policy_.host_server()) {
    join_and_watch(plan_.rendezvous_port);
    return {};
  }
  int port = plan_.rendezvous_port;
  rendezvous::ListenError error = host_rendezvous(port);
  name_port_holder(error);
  // A port that cannot be bound for another reason than a holder is a start-up error.
  if (error.failed() && !error.port_taken()) return error.text;
  carry_out(policy_.on_hosting_attempt(error.failed() ? HostingOutcome::PortTaken : HostingOutcome::Listening,
                                       error.text, PolicyClock::now()));
  return {};
}

void NodeAgent::try_hosting() {
  int port = plan_.rendezvous_port;
  rendezvous::ListenError error = host_rendezvous(port);
  name_port_holder(error);
  const HostingOutcome outcome = !error.failed()     ? HostingOutcome::Listening
                                 : error.port_taken() ? HostingOutcome::PortTaken
                                                      : HostingOutcome::Failed;
  carry_out(policy_.on_hosting_attempt(outcome, error.text, PolicyClock::now()));
}

// A rendezvous port another process holds: who, when this launcher can see it in /proc.
void NodeAgent::name_port_holder(rendezvous::ListenError& error) const {
  if (!error.port_taken()) return;
  if (std::string holder = preflight::describe_port_holder(plan_.rendezvous_port); !holder.empty())
    error.text += "; it is held by " + holder;
}

void NodeAgent::open_peer_probe() {
  if (auto endpoints = peer_probe_.open()) plan_.facts.probe_endpoints = *endpoints;
}

void NodeAgent::join_and_watch(int port) {
  record_job(port);
  open_peer_probe();
  join_master(plan_.master_ip, port);
  if (!policy_.host_server()) watch_join();
}

// The master node: the rendezvous server reports to the JobCoordinator, which decides.
rendezvous::ListenError NodeAgent::host_rendezvous(int& port) {
  const LaunchConfig& c = plan_.config;
  CoordinatorSettings settings;
  settings.config = c;
  settings.worker_master_addr = plan_.master_ip;
  settings.master_is_loopback = preflight::is_loopback(plan_.master_ip);
  settings.worker_bind_address = c.standalone ? "127.0.0.1" : "0.0.0.0";
  settings.doctor = plan_.doctor;
  settings.program_fingerprint = plan_.facts.program_fingerprint;
  settings.socket_ifname = plan_.facts.socket_ifname;
  if (etcd_) {  // etcd: elected; the state goes to etcd after each decision, fenced by the seat
    settings.elected = true;
    settings.save_state = [seat = &etcd_->seat()](std::string state, std::function<void()> confirmed) {
      seat->save_state(std::move(state), std::move(confirmed));
    };
    settings.restored_state = etcd_->restored_state();
    settings.run_nonce = etcd_->seat().run();
  }
  coordinator_ = std::make_unique<JobCoordinator>(io_, settings);
  rendezvous::ServerOptions options;
  options.job_id = c.job_id;
  options.expected_nodes = c.nodes;
  options.token = c.token;
  options.join_timeout = seconds_to_ms(c.join_timeout_s);
  options.heartbeat_interval = seconds_to_ms(c.heartbeat_interval_s);
  options.heartbeat_timeout = seconds_to_ms(c.heartbeat_timeout_s);
  options.launcher_version = plan_.facts.launcher_version;
  options.launcher_assigns_slots = membership_enabled(c);
  options.max_spares = c.membership.spares;
  if (etcd_) options.order_revision = std::to_string(etcd_->seat().leader_revision());
  rendezvous::ServerCallbacks callbacks;
  callbacks.plan = [this](std::uint64_t g, const std::vector<rendezvous::NodeRecord>& nodes) {
    return coordinator_->plan(g, nodes);
  };
  callbacks.on_message = [this](int node, const rendezvous::Message& m) {
    if (node >= 0 && debug_relay_ && debug_relay_->on_message(node, m)) return;
    coordinator_->on_message(node, m);
  };
  callbacks.on_node_lost = [this](const rendezvous::NodeRecord& n, const std::string& why) {
    coordinator_->on_node_lost(n, why);
  };
  callbacks.on_member_joined = [this](const rendezvous::NodeRecord& n) { coordinator_->on_member_joined(n); };
  callbacks.on_progress = [](int joined, int expected, const std::vector<std::string>& missing) {
    show_join_progress(joined, expected, fmt::format("{}", fmt::join(missing, ", ")));
  };
  callbacks.on_join_timeout = [this](const rendezvous::JoinTimeout& t) { coordinator_->on_join_timeout(t); };
  // Strangers can make many drops: the log gets the first few of each interval and a count.
  callbacks.on_refused = [this, drops = std::make_shared<DroppedConnectionLog>(io_)](const std::string& peer,
                                                                                    const std::string& reason) {
    // A worker's c10d store client on this port is the program's mistake, not a stranger:
    // said at once and carried into the job's root cause.
    if (reason.find(rendezvous::kForeignStoreClient) != std::string::npos)
      return coordinator_->on_foreign_store_client(peer);
    drops->note(peer, reason);
  };
  callbacks.status_text = [this]() {
    return coordinator_->queries().status_text() + (etcd_ ? "\n" + etcd_->seat().status_line() + "\n" : "");
  };
  callbacks.query_text = [this](const std::string& query) {
    if (query.rfind("debug ", 0) == 0) {
      // A debugger runs code in every rank: from another terminal only with the job's token.
      if (plan_.config.token.empty() && plan_.config.nodes > 1)
        return std::string("error: this multi-node job has no rendezvous token, so its debug console is only at the "
                           "terminal that started it; start the job with DDPLAUNCH_TOKEN (or --token-file) to debug "
                           "it from other terminals");
      return debug_relay_ ? debug_relay_->answer_query(query) : std::string("error: this launcher has no debug console");
    }
    return coordinator_->queries().answer(query);
  };
  server_ = std::make_unique<rendezvous::Server>(io_, options, callbacks);
  coordinator_->attach(*server_);
  coordinator_->take_over();  // etcd: from the last coordinator's state (nothing otherwise)
  if (rendezvous::ListenError error = server_->listen_on(plan_.rendezvous_bind, static_cast<std::uint16_t>(port));
      error.failed()) {
    error.text = fmt::format("cannot host the rendezvous on port {}: {}", port, error.text);
    return error;
  }
  port = server_->port();
  if (!c.standalone)
    spdlog::info("hosting the rendezvous on port {} of {} for {} node(s){}", port,
                 fmt::join(server_->listening_on(), ", "), c.nodes,
                 c.token.empty() ? "" : "; joins must prove the token (authentication on)");
  if (c.nodes > 1 && c.token.empty())
    spdlog::warn("no rendezvous token: anyone who can reach port {} can join this job; set DDPLAUNCH_TOKEN or "
                 "--token-file (ddplaunch-srun does this for you)",
                 port);
  start_debug_relay();
  return {};
}

void NodeAgent::join_master(const std::string& host, int port, int serial) {
  const LaunchConfig& c = plan_.config;
  rendezvous::ClientOptions options;
  options.job_id = c.job_id;
  options.token = c.token;
  options.host = host;
  options.port = static_cast<std::uint16_t>(port);
  options.connect_timeout = seconds_to_ms(c.connect_timeout_s);
  // Nodes usually start within milliseconds of each other: a node that beats node 0 to it
  // retries a refused connect soon, not after the library's 500 ms default.
  options.retry_interval = std::chrono::milliseconds(100);
  options.join_timeout = seconds_to_ms(c.join_timeout_s);
  options.heartbeat_interval = seconds_to_ms(c.heartbeat_interval_s);
  options.heartbeat_timeout = seconds_to_ms(c.heartbeat_timeout_s);
  rendezvous::ClientCallbacks callbacks;
  callbacks.on_assignment = [this](const rendezvous::Assignment& a) { on_assignment(a); };
  callbacks.on_refused = [this](const std::string& reason) {
    // On the master the refusal is its own plan's; from another master it is a peer's text.
    carry_out(policy_.on_refused(policy_.host_server() ? reason : rendezvous::printable(reason), supervisor_.active()));
  };
  // etcd: each connection is to one elected coordinator (connection `serial`); a superseded
  // one's orders are refused, and the loss of the current one means joining the next one.
  callbacks.on_message = [this, serial](const rendezvous::Message& m) {
    if (!etcd_ || etcd_->obeys(m, serial)) on_master_message(m);
  };
  callbacks.on_lost = [this, serial](const std::string& why) {
    if (!etcd_) return on_lost(rendezvous::printable(why), kExitFailure);
    etcd_->on_connection_lost(serial, rendezvous::printable(why));
  };
  callbacks.on_impostor = [this](const std::string& why) {
    spdlog::warn("{} — connecting again until the join timeout ({}; --join-timeout)", rendezvous::printable(why),
                 human_duration(plan_.config.join_timeout_s));
  };
  callbacks.on_progress = [this](int joined, int expected, const std::vector<std::string>& missing) {
    if (!policy_.host_server() && !policy_.spare())
      show_join_progress(joined, expected, rendezvous::printable(fmt::format("{}", fmt::join(missing, ", "))));
  };
  client_ = std::make_unique<rendezvous::Client>(io_, options, callbacks);
  rendezvous::NodeFacts facts = plan_.facts;
  facts.requested_node_rank = policy_.host_server() ? 0 : c.node_rank;
  if (etcd_) facts.requested_node_rank = node_rank_ >= 0 ? node_rank_ : c.node_rank;  // back to its slot
  client_->join(facts);
}

// While this node has not joined, probe the master the way the job will use it (TCP, no
// ICMP, never blocking the loop) and say why it cannot get in; when to give up is the
// NodePolicy's (on_join_probe).
void NodeAgent::watch_join() {
  const double interval = std::max(2.0, plan_.config.connect_timeout_s);
  join_timer_.expires_after(seconds_to_ms(interval));
  join_timer_.async_wait([this, interval](const boost::system::error_code& ec) {
    if (ec || policy_.state() != NodeState::Joining || policy_.spare()) return;
    if (!client_->local_address().empty()) {  // connected: waiting for the other nodes
      policy_.on_join_connected();
      return watch_join();
    }
    const auto timeout = std::min(seconds_to_ms(plan_.config.connect_timeout_s), std::chrono::milliseconds(2000));
    probe_master_async(io_, plan_.master_ip, plan_.rendezvous_port, timeout,
                       [this, interval](const preflight::ProbeResult& probe) { on_join_probe(probe, interval); });
  });
}

void NodeAgent::on_join_probe(const preflight::ProbeResult& probe, double interval) {
  if (policy_.state() != NodeState::Joining) return;
  const JoinProbe outcome = probe.ok()                                          ? JoinProbe::Answered
                            : probe.status == preflight::ProbeStatus::Refused ? JoinProbe::Refused
                            : probe.status == preflight::ProbeStatus::Error   ? JoinProbe::LocalError
                                                                              : JoinProbe::Unanswered;
  carry_out(policy_.on_join_probe(outcome, probe.message, interval));
  if (!policy_.finished()) watch_join();
}

std::string NodeAgent::check_socket_ifnames(std::string& selected, const std::string& probe_ifname) {
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
    if (!outcome && judge_socket_ifname_problem(variable, plan_.nccl_may_run) == IfnameProblem::WarnOnly) {
      spdlog::warn("{} (ignored: this node has no GPU, so NCCL does not run here; fix or unset {} before "
                   "running on GPU nodes)",
                   outcome.message, variable);
      continue;
    }
    if (!outcome) return outcome.message;
  }
  if (!user_set && !probe_ifname.empty()) {
    selected = probe_ifname;
    spdlog::info("NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME unset: using {}, the interface the peer probe found working "
                 "between every pair of neighbouring nodes",
                 probe_ifname);
  } else if (!user_set && !route.empty()) {
    selected = route;
    spdlog::info("NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME unset: using {} ({}), the interface the rendezvous "
                 "connection to the master uses",
                 route, local);
  }
  return {};
}

void NodeAgent::run_doctor_checks() {
  std::vector<std::string> problems;
  std::string ifname;
  if (std::string problem = check_socket_ifnames(ifname); !problem.empty()) problems.push_back(problem);
  if (auto user_choice = plan_.base_env.find(contract::kNcclSocketIfname); user_choice != plan_.base_env.end())
    ifname = user_choice->second;
  // Host, address, GPUs and versions are in the node facts the master already holds.
  client_->send(messages::encode(policy_.generation(), messages::NodeReport{problems.empty(), ifname,
                                                                   fmt::format("{}", fmt::join(problems, "; "))}));
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

}  // namespace ddplaunch
