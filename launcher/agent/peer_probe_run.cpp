// PeerProbeRun: the listeners, this node's probes on a thread, the links to the master.
#include "agent/peer_probe_run.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "wire/launcher_messages.h"
#include "ddplaunch/base/time_units.h"
#include "ddplaunch/preflight/interfaces.h"
#include "ddplaunch/preflight/resolve.h"
#include "ddplaunch/preflight/ring_plan.h"
#include "ddplaunch/rendezvous/token_proof.h"
#include "policy/probe_round.h"

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

PeerProbeRun::PeerProbeRun(boost::asio::io_context& io, const NodePlan& plan, const NodeView& node,
                           MasterLink& master)
    : io_(io), plan_(plan), node_(node), master_(master) {}

PeerProbeRun::~PeerProbeRun() {
  if (thread_.joinable()) thread_.join();
}

std::optional<std::string> PeerProbeRun::open() {
  const LaunchConfig& c = plan_.config;
  if (c.nodes < 2 || !c.peer_probe || c.standalone) return std::nullopt;
  auto interfaces = preflight::list_interfaces();
  if (!interfaces) {
    spdlog::warn("peer probe skipped: cannot list network interfaces: {}", interfaces.error);
    return std::nullopt;
  }
  // Every node on this machine (a loopback master): loopback is the interface they share.
  const bool include_loopback = preflight::is_loopback(plan_.master_ip);
  auto endpoints = preflight::candidate_endpoints(*interfaces, include_loopback);
  const auto lifetime = seconds_to_ms(c.join_timeout_s) + std::chrono::minutes(2);
  auto listener = preflight::PeerProbeListener::start(endpoints, lifetime, probe_auth(c.token));
  if (!listener.value || (*listener.value)->endpoints().empty()) {
    spdlog::warn("peer probe skipped: no interface to listen on{}", listener.error.empty() ? "" : ": " + listener.error);
    return std::nullopt;
  }
  listener_ = std::move(*listener.value);
  return preflight::encode_endpoints(listener_->endpoints());
}

// Due by the same rule on every node and on the master (probe_expected): the first
// generation of a multi-node job whose every node advertised probe endpoints, with the node
// list at hand.
bool PeerProbeRun::due(const rendezvous::Assignment& a) const {
  return listener_ && a.generation == Generation{0} && probe_expected(probe_offers(a.nodes));
}

void PeerProbeRun::start(const rendezvous::Assignment& a, Generation generation) {
  auto offers = probe_offers(a.nodes);
  // Every node on this machine (a loopback master): a "link" is the kernel copying between
  // processes, and a throughput sample would only measure CPU contention — connect only.
  const bool one_machine = preflight::is_loopback(plan_.master_ip);
  auto plan = preflight::probes_for_node(a.node_rank, offers, preflight::probe_pairs(a.node_count, kAllPairsUpTo),
                                         kConnectTimeout,
                                         one_machine ? std::chrono::milliseconds(0) : kThroughputSample);
  const preflight::ProbeAuth auth = probe_auth(plan_.config.token);
  for (auto& p : plan) p.probe.auth = auth;
  spdlog::info("peer probe: {} link(s) to test from this node before the workers start", plan.size());
  thread_ = std::thread([this, plan = std::move(plan), generation] {
    auto links = preflight::run_probes(plan);
    boost::asio::post(io_, [this, links = std::move(links), generation]() mutable {
      if (thread_.joinable()) thread_.join();
      // The node still probes for this generation, with a master to tell.
      if (node_.state() != NodeState::Probing || generation != master_.generation() || !master_.connected()) return;
      for (const auto& l : links)
        if (!l.result.ok)
          spdlog::warn("peer probe: node {} -> node {} over {} ({} -> {}): {}", l.pair.from, l.pair.to, l.ifname,
                       l.from_address, l.to_endpoint, l.result.error);
      master_.send(messages::encode(generation, messages::ProbeResults{std::move(links)}));
    });
  });
}

void PeerProbeRun::close() {
  if (listener_) listener_->stop();
  listener_.reset();
}

}  // namespace ddplaunch
