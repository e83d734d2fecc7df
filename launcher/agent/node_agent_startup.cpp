// NodeAgent start-up: host the rendezvous (server + JobCoordinator) on the master node,
// join it as a client on every node, and explain a master that cannot be reached.
#include "agent/node_agent.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "ddplaunch/preflight/resolve.h"
#include "ddplaunch/preflight/tcp_probe.h"
#include "exit_codes.h"
#include "time_units.h"

namespace ddplaunch {

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
    options.join_timeout = seconds_to_ms(c.join_timeout_s);
    options.heartbeat_interval = seconds_to_ms(c.heartbeat_interval_s);
    options.heartbeat_timeout = seconds_to_ms(c.heartbeat_timeout_s);
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
    if (plan_.host_server) spdlog::error("{}", reason);  // our own plan refused the job
    else spdlog::error("the master refused this node: {}", reason);
    lost_master_ = true;
    if (supervisor_.active()) supervisor_.stop(seconds_to_ms(plan_.config.grace_s));
    else finish(kExitConfigError);
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
  join_timer_.expires_after(seconds_to_ms(interval));
  join_timer_.async_wait([this, interval](const boost::system::error_code& ec) {
    if (ec || finished_ || node_rank_ >= 0) return;
    if (!client_->local_address().empty()) {  // connected: waiting for the other nodes
      unanswered_probes_ = refused_probes_ = 0;
      watch_join();
      return;
    }
    const auto probe_timeout = std::min(seconds_to_ms(plan_.config.connect_timeout_s), std::chrono::milliseconds(2000));
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
      finish(kExitConfigError);
      return;
    }
    if (loopback && refused_probes_ >= 3) {
      spdlog::error("giving up: the master {} is this machine's loopback and nothing listens on port {} here. On a "
                    "multi-node job every node must reach node 0 by a routable address: pass --master <node 0's "
                    "IP or name>:{} (the classic MASTER_ADDR=127.0.0.1 mistake)",
                    plan_.master_ip, plan_.rendezvous_port, plan_.rendezvous_port);
      finish(kExitConfigError);
      return;
    }
    watch_join();
  });
}

}  // namespace ddplaunch
