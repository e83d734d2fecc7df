// The peer probe's plan and verdict, pure: which node probes which peer over which
// interface, and — from the results — the one interface name the job uses on every node,
// or a refusal naming the pair that cannot connect, plus warnings for slow links.
// Cost scales with the ring (each node probes its successor) beyond `all_pairs_up_to` nodes;
// small jobs probe every pair.
#pragma once

#include <string>
#include <vector>

#include "ddplaunch/preflight/peer_probe.h"

namespace ddplaunch::preflight {

struct NodeProbeOffer {  // what one node advertised in its join facts
  int node = 0;
  std::string host;
  std::vector<ProbeEndpoint> endpoints;  // one per candidate interface, with its listener port
};

struct ProbePair {
  int from = 0;
  int to = 0;
  bool operator==(const ProbePair&) const = default;
};

// Ring successors (i -> i+1 mod n) for n > 1, plus every other pair i -> j (i < j) when
// n <= all_pairs_up_to. No pair twice; none for a single node.
std::vector<ProbePair> probe_pairs(int node_count, int all_pairs_up_to);

struct PlannedProbe {
  ProbePair pair;
  LinkProbe probe;
};

// The probes `node` runs: for each pair from it, one per interface name both ends offer;
// a throughput sample only towards its ring successor (node ranks are 0..offers-1).
std::vector<PlannedProbe> probes_for_node(int node, const std::vector<NodeProbeOffer>& offers,
                                          const std::vector<ProbePair>& pairs,
                                          std::chrono::milliseconds connect_timeout, std::chrono::milliseconds sample);

struct ProbedLink {  // one probe's outcome, as the probing node reports it
  ProbePair pair;
  std::string ifname;
  std::string from_address;
  std::string to_endpoint;  // "10.0.1.4:41233"
  LinkResult result;
};

// Runs the planned probes concurrently (at most `parallel` at a time) and returns their
// outcomes in plan order. Bounded: each probe bounds itself (peer_probe.h).
std::vector<ProbedLink> run_probes(const std::vector<PlannedProbe>& plan, std::size_t parallel = 32);

struct InterfaceChoice {
  std::string ifname;   // the interface every node uses ("" = none chosen: leave the env alone)
  bool from_user = false;  // the user's NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME, verified
  std::string refusal;  // non-empty: no interface works between some neighbours; names them
  std::vector<std::string> warnings;  // slow links (with figures), names not common to all nodes
  std::string summary;  // one line for the log: what was chosen and why
};

// user_variable/user_value: the socket-interface variable the user set on the nodes
// ("NCCL_SOCKET_IFNAME", "eth1"), or empty strings. A link is "slow" below the median of
// the chosen interface's links divided by slow_factor.
// `preferred`: the interface that carries the master's address — what the user implicitly
// chose with --master; kept among the working ones unless its slowest link is more than
// slow_factor times slower than another interface's (a 1 Gbit/s management network next
// to a fast fabric), so noise between equal NICs never flips the choice.
InterfaceChoice choose_interface(const std::vector<NodeProbeOffer>& offers, const std::vector<ProbedLink>& links,
                                 const std::string& user_variable, const std::string& user_value,
                                 double slow_factor = 4.0, const std::string& preferred = "");

// doctor's ring table: pair, interface, RTT, throughput, verdict — one row per probed link.
std::string render_ring_table(const std::vector<ProbedLink>& links);

}  // namespace ddplaunch::preflight
