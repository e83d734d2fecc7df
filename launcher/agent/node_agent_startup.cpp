// NodeAgent start-up: host the rendezvous on the master node (RendezvousHost), join it as a
// client on every node and record the job, explain a master that cannot be reached, and the
// node's own checks once its assignment is known.
#include "agent/node_agent.h"

#include "agent/job_authentication.h"
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "wire/launcher_messages.h"
#include "ddplaunch/preflight/interfaces.h"
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
  rendezvous::ListenError error = host_.listen(plan_.rendezvous_port, nullptr);
  // A port that cannot be bound for another reason than a holder is a start-up error.
  if (error.failed() && !error.port_taken()) return error.text;
  carry_out(policy_.on_hosting_attempt(error.failed() ? HostingOutcome::PortTaken : HostingOutcome::Listening,
                                       error.text, PolicyClock::now()));
  return {};
}

void NodeAgent::try_hosting() {
  rendezvous::ListenError error = host_.listen(plan_.rendezvous_port, nullptr);
  const HostingOutcome outcome = !error.failed()     ? HostingOutcome::Listening
                                 : error.port_taken() ? HostingOutcome::PortTaken
                                                      : HostingOutcome::Failed;
  carry_out(policy_.on_hosting_attempt(outcome, error.text, PolicyClock::now()));
}

void NodeAgent::open_peer_probe() {
  if (auto endpoints = peer_probe_.open()) plan_.facts.probe_endpoints = *endpoints;
}

void NodeAgent::join_and_watch(int port) {
  record_job(plan_.master_host, port);
  open_peer_probe();
  join_master(plan_.master_ip, port);
  if (!policy_.host_server()) join_watch_.start(*client_);
}

void NodeAgent::join_master(const std::string& host, int port, int serial) {
  const LaunchConfig& c = plan_.config;
  // Whom this node's ranks' debuggers answer from now on (job_authentication.h).
  debug_sessions_.set_master_proven(master_may_reach_ranks(c, host_.hosting()));
  rendezvous::ClientOptions options;
  options.job_id = c.job_id;
  options.token = c.token;
  if (host_.hosting()) options.own_node_secret = plan_.own_node_secret;  // joining its own server
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

void NodeAgent::record_job(const std::string& master_host, int rendezvous_port) {
  if (!job_record_.empty() || plan_.doctor) return;
  const LaunchConfig& c = plan_.config;
  const std::string host = master_host.find(':') != std::string::npos ? "[" + master_host + "]" : master_host;
  JobRecord record{c.job_id, fmt::format("{}:{}", host, rendezvous_port), plan_.record_token || c.token.empty() ? plan_.query_token : "",
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

}  // namespace ddplaunch
