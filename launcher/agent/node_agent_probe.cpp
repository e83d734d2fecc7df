// NodeAgent and the peer probe: a listener per candidate interface from start-up,
// advertised in the join facts; on the first assignment every node probes its ring
// neighbour (every peer on small jobs) off the event loop, reports the links to the master,
// and starts its workers on the master's verdict (probe_verdict) — or stops on its refusal.
#include "agent/node_agent.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "agent/launcher_messages.h"
#include "ddplaunch/preflight/interfaces.h"
#include "ddplaunch/preflight/resolve.h"
#include "ddplaunch/preflight/ring_plan.h"
#include "ddplaunch/rendezvous/token_proof.h"
#include "policy/probe_round.h"
#include "ddplaunch/base/time_units.h"

namespace ddplaunch {

namespace {
constexpr int kAllPairsUpTo = 8;  // nodes: every pair probed; above, the ring (O(n), not O(n^2))
constexpr auto kConnectTimeout = std::chrono::seconds(2);
constexpr auto kThroughputSample = std::chrono::milliseconds(200);

// With a token the probe's hello and answer carry HMAC-SHA256 MACs keyed with it (the
// rendezvous' libcrypto, loaded only then); without one, none (anyone may join such a job).
preflight::ProbeAuth probe_auth(const std::string& token) {
  if (token.empty()) return {};
  return {[token](std::string_view message) { return rendezvous::to_hex(rendezvous::hmac_sha256(token, message)); },
          [](std::string_view a, std::string_view b) { return rendezvous::equal_constant_time(a, b); }};
}
}  // namespace

// Multi-node jobs only: the listeners must be up before the facts go out with the join.
void NodeAgent::open_peer_probe() {
  const LaunchConfig& c = plan_.config;
  if (c.nodes < 2 || !c.peer_probe || c.standalone) return;
  auto interfaces = preflight::list_interfaces();
  if (!interfaces) {
    spdlog::warn("peer probe skipped: cannot list network interfaces: {}", interfaces.error);
    return;
  }
  // Every node on this machine (a loopback master): loopback is the interface they share.
  const bool include_loopback = preflight::is_loopback(plan_.master_ip);
  auto endpoints = preflight::candidate_endpoints(*interfaces, include_loopback);
  const auto lifetime = seconds_to_ms(c.join_timeout_s) + std::chrono::minutes(2);
  auto listener = preflight::PeerProbeListener::start(endpoints, lifetime, probe_auth(c.token));
  if (!listener.value || (*listener.value)->endpoints().empty()) {
    spdlog::warn("peer probe skipped: no interface to listen on{}", listener.error.empty() ? "" : ": " + listener.error);
    return;
  }
  probe_listener_ = std::move(*listener.value);
  plan_.facts.probe_endpoints = preflight::encode_endpoints(probe_listener_->endpoints());
}

// Probing, when due: the same rule on every node and on the master (probe_expected) — the
// first generation of a multi-node job whose every node advertised probe endpoints, with the
// node list at hand. Returns false (nothing started) when no probe is due.
bool NodeAgent::start_peer_probe(const rendezvous::Assignment& a) {
  if (!probe_listener_ || a.generation != 0) return false;
  auto offers = probe_offers(a.nodes);
  if (!probe_expected(offers)) return false;
  policy_.probing();  // workers start on the master's verdict
  probing_assignment_ = a;
  // Every node on this machine (a loopback master): a "link" is the kernel copying between
  // processes, and a throughput sample would only measure CPU contention — connect only.
  const bool one_machine = preflight::is_loopback(plan_.master_ip);
  auto plan = preflight::probes_for_node(a.node_rank, offers, preflight::probe_pairs(a.node_count, kAllPairsUpTo),
                                         kConnectTimeout,
                                         one_machine ? std::chrono::milliseconds(0) : kThroughputSample);
  const preflight::ProbeAuth auth = probe_auth(plan_.config.token);
  for (auto& p : plan) p.probe.auth = auth;
  spdlog::info("peer probe: {} link(s) to test from this node before the workers start", plan.size());
  const long generation = policy_.generation();
  probe_thread_ = std::thread([this, plan = std::move(plan), generation] {
    auto links = preflight::run_probes(plan);
    boost::asio::post(io_, [this, links = std::move(links), generation]() mutable {
      if (probe_thread_.joinable()) probe_thread_.join();
      if (policy_.state() != NodeState::Probing || generation != policy_.generation() || !client_) return;
      for (const auto& l : links)
        if (!l.result.ok)
          spdlog::warn("peer probe: node {} -> node {} over {} ({} -> {}): {}", l.pair.from, l.pair.to, l.ifname,
                       l.from_address, l.to_endpoint, l.result.error);
      client_->send(messages::encode(generation, messages::ProbeResults{std::move(links)}));
    });
  });
  return true;
}

void NodeAgent::close_peer_probe() {
  if (probe_listener_) probe_listener_->stop();
  probe_listener_.reset();
}

}  // namespace ddplaunch
