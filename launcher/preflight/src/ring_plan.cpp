// The peer probe's plan and verdict: see ring_plan.h.
#include "ddplaunch/preflight/ring_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "ddplaunch/preflight/socket_ifname.h"

namespace ddplaunch::preflight {

namespace {

const NodeProbeOffer* offer_of(const std::vector<NodeProbeOffer>& offers, int node) {
  for (const auto& o : offers)
    if (o.node == node) return &o;
  return nullptr;
}

const ProbeEndpoint* endpoint_on(const NodeProbeOffer& offer, const std::string& ifname) {
  for (const auto& e : offer.endpoints)
    if (e.ifname == ifname) return &e;
  return nullptr;
}

std::string node_text(const std::vector<NodeProbeOffer>& offers, int node, const std::string& address) {
  const NodeProbeOffer* o = offer_of(offers, node);
  std::string host = o && !o->host.empty() ? "host " + o->host + ", " : "";
  return "node " + std::to_string(node) + " (" + host + address + ")";
}

std::string mbit_text(double mbit) {
  char text[32];
  if (mbit < 0) return "-";
  std::snprintf(text, sizeof(text), mbit >= 1000 ? "%.1f Gbit/s" : "%.0f Mbit/s", mbit >= 1000 ? mbit / 1000 : mbit);
  return text;
}

// Interface names every node offers, in node 0's order — except names whose address is the
// same on two nodes of different hosts (docker0's 172.17.0.1 everywhere): no network between
// them. Nodes of one host (a loopback job) legitimately share 127.0.0.1.
std::vector<std::string> common_names(const std::vector<NodeProbeOffer>& offers) {
  std::vector<std::string> names;
  if (offers.empty()) return names;
  for (const auto& e : offers.front().endpoints) {
    std::map<std::string, std::string> host_of_address;
    bool usable = true;
    for (const auto& o : offers) {
      const ProbeEndpoint* mine = endpoint_on(o, e.ifname);
      if (!mine) {
        usable = false;
        break;
      }
      auto [it, fresh] = host_of_address.emplace(mine->address, o.host);
      if (!fresh && it->second != o.host) usable = false;
    }
    if (usable) names.push_back(e.ifname);
  }
  return names;
}

// The first probed pair that fails over `ifname` ("" when every pair works), worded for people.
std::string first_failure(const std::vector<NodeProbeOffer>& offers, const std::vector<ProbedLink>& links,
                          const std::vector<ProbePair>& pairs, const std::string& ifname) {
  for (const auto& pair : pairs) {
    auto link = std::find_if(links.begin(), links.end(),
                             [&](const ProbedLink& l) { return l.pair == pair && l.ifname == ifname; });
    if (link == links.end())
      return node_text(offers, pair.from, "?") + " sent no probe result for " + node_text(offers, pair.to, "?") +
             " over " + ifname;
    if (!link->result.ok)
      return node_text(offers, pair.from, link->from_address) + " cannot reach " +
             node_text(offers, pair.to, link->to_endpoint) + " over " + ifname + ": " + link->result.error;
  }
  return "";
}

// The lowest measured throughput over `ifname` (-1 when none was measured).
double slowest(const std::vector<ProbedLink>& links, const std::string& ifname) {
  double low = -1;
  for (const auto& l : links)
    if (l.ifname == ifname && l.result.mbit_per_s >= 0) low = low < 0 ? l.result.mbit_per_s : std::min(low, l.result.mbit_per_s);
  return low;
}

std::vector<std::string> slow_link_warnings(const std::vector<NodeProbeOffer>& offers,
                                            const std::vector<ProbedLink>& links, const std::string& ifname,
                                            double slow_factor) {
  std::vector<double> rates;
  for (const auto& l : links)
    if (l.ifname == ifname && l.result.ok && l.result.mbit_per_s >= 0) rates.push_back(l.result.mbit_per_s);
  if (rates.size() < 2) return {};
  std::sort(rates.begin(), rates.end());
  const double median = rates[rates.size() / 2];
  std::vector<std::string> out;
  for (const auto& l : links) {
    if (l.ifname != ifname || !l.result.ok || l.result.mbit_per_s < 0 || l.result.mbit_per_s * slow_factor >= median)
      continue;
    out.push_back("slow link: " + node_text(offers, l.pair.from, l.from_address) + " -> " +
                  node_text(offers, l.pair.to, l.to_endpoint) + " over " + ifname + ": " +
                  mbit_text(l.result.mbit_per_s) + ", while the median of the ring's links is " + mbit_text(median) +
                  "; collectives run at the speed of the slowest link: check that link's NIC, cable, switch port "
                  "or a rate limit on the way");
  }
  return out;
}

std::vector<ProbePair> pairs_probed(const std::vector<ProbedLink>& links) {
  std::vector<ProbePair> pairs;
  for (const auto& l : links)
    if (std::find(pairs.begin(), pairs.end(), l.pair) == pairs.end()) pairs.push_back(l.pair);
  return pairs;
}

}  // namespace

std::vector<ProbePair> probe_pairs(int node_count, int all_pairs_up_to) {
  std::vector<ProbePair> pairs;
  if (node_count < 2) return pairs;
  auto add = [&](int from, int to) {
    ProbePair p{from, to}, reverse{to, from};
    if (std::find(pairs.begin(), pairs.end(), p) == pairs.end() &&
        std::find(pairs.begin(), pairs.end(), reverse) == pairs.end())
      pairs.push_back(p);
  };
  for (int i = 0; i < node_count; ++i) add(i, (i + 1) % node_count);
  if (node_count <= all_pairs_up_to)
    for (int i = 0; i < node_count; ++i)
      for (int j = i + 1; j < node_count; ++j) add(i, j);
  return pairs;
}

std::vector<PlannedProbe> probes_for_node(int node, const std::vector<NodeProbeOffer>& offers,
                                          const std::vector<ProbePair>& pairs,
                                          std::chrono::milliseconds connect_timeout, std::chrono::milliseconds sample) {
  std::vector<PlannedProbe> out;
  const NodeProbeOffer* mine = offer_of(offers, node);
  if (!mine) return out;
  const std::vector<std::string> names = common_names(offers);
  for (const auto& pair : pairs) {
    if (pair.from != node) continue;
    const NodeProbeOffer* peer = offer_of(offers, pair.to);
    if (!peer) continue;
    // Throughput only towards the ring successor: each node then sends one stream and
    // receives one, so the samples run in parallel without sharing a NIC.
    const bool ring_successor = pair.to == (pair.from + 1) % static_cast<int>(offers.size());
    for (const auto& local : mine->endpoints)
      if (const ProbeEndpoint* remote = endpoint_on(*peer, local.ifname);
          remote && std::find(names.begin(), names.end(), local.ifname) != names.end())
        out.push_back({pair, LinkProbe{local.ifname, local.address, *remote, connect_timeout,
                                       ring_successor ? sample : std::chrono::milliseconds(0), ProbeAuth{}}});
  }
  return out;
}

InterfaceChoice choose_interface(const std::vector<NodeProbeOffer>& offers, const std::vector<ProbedLink>& links,
                                 const std::string& user_variable, const std::string& user_value,
                                 double slow_factor, const std::string& preferred) {
  InterfaceChoice choice;
  const std::vector<ProbePair> pairs = pairs_probed(links);
  if (offers.size() < 2 || pairs.empty()) return choice;
  const std::vector<std::string> names = common_names(offers);

  std::vector<std::string> working, failures;
  for (const auto& name : names) {
    std::string why = first_failure(offers, links, pairs, name);
    if (why.empty()) working.push_back(name);
    else failures.push_back(why);
  }
  auto works_list = [&] {
    std::string text;
    for (const auto& w : working) text += (text.empty() ? "" : ", ") + w;
    return text;
  };

  if (!user_value.empty()) {
    // The user's choice, verified: the interface the library would pick first on node 0.
    IfnameSpec spec = parse_ifname_spec(user_value, dialect_for_variable(user_variable));
    std::vector<NetInterface> offered;
    for (const auto& e : offers.front().endpoints) offered.push_back({e.ifname, true, false, {e.address}, {}});
    auto selected = selected_interfaces(spec, offered);
    if (spec.ignored || selected.empty()) return choice;  // the preflight check reports this case
    choice.ifname = selected.front();
    choice.from_user = true;
    std::string why = first_failure(offers, links, pairs, choice.ifname);
    if (!why.empty()) {
      choice.refusal = why + " (" + user_variable + "=" + user_value + ")" +
                       (working.empty() ? "; no other interface works between all nodes either"
                                        : "; " + works_list() + (working.size() > 1 ? " work" : " works") +
                                              ": set " + user_variable + "=" + working.front() + " or unset it");
      return choice;
    }
  } else if (working.empty()) {
    choice.refusal = "no network interface connects every pair of neighbouring nodes";
    for (const auto& f : failures) choice.refusal += "\n  " + f;
    if (names.empty()) choice.refusal += "\n  the nodes have no interface name in common";
    choice.refusal += "\n  check the firewall between those nodes (NCCL and gloo connect every rank to its peers, "
                      "not only to the master), or skip this check with --no-peer-probe";
    return choice;
  } else {
    // The working interface whose slowest link is fastest (node 0's order breaks ties) —
    // unless the master's own interface works and is not far slower than that.
    choice.ifname = *std::max_element(working.begin(), working.end(), [&](const auto& a, const auto& b) {
      return slowest(links, a) < slowest(links, b);
    });
    const bool preferred_works = std::find(working.begin(), working.end(), preferred) != working.end();
    if (preferred_works && slowest(links, preferred) * slow_factor >= slowest(links, choice.ifname))
      choice.ifname = preferred;
  }
  choice.warnings = slow_link_warnings(offers, links, choice.ifname, slow_factor);
  for (const auto& f : failures)
    if (f.find(" over " + choice.ifname + ":") == std::string::npos && !choice.from_user)
      choice.warnings.push_back("not used: " + f);
  choice.summary = "peer probe: " + choice.ifname + (choice.from_user ? " (" + user_variable + ", verified)" : "") +
                   " connects all " + std::to_string(pairs.size()) + " probed pair(s) of the " +
                   std::to_string(offers.size()) + " nodes; slowest link " + mbit_text(slowest(links, choice.ifname));
  return choice;
}

std::string render_ring_table(const std::vector<ProbedLink>& links) {
  std::string table = "pair      interface  rtt        throughput      verdict\n";
  char row[128];
  for (const auto& l : links) {
    std::string pair = std::to_string(l.pair.from) + " -> " + std::to_string(l.pair.to);
    char rtt[32] = "-";
    if (l.result.rtt_ms >= 0) std::snprintf(rtt, sizeof(rtt), "%.2f ms", l.result.rtt_ms);
    std::snprintf(row, sizeof(row), "%-9s %-10s %-10s %-15s ", pair.c_str(), l.ifname.c_str(), rtt,
                  mbit_text(l.result.mbit_per_s).c_str());
    table += row + (l.result.ok ? std::string("ok") : "FAIL: " + l.result.error) + "\n";
  }
  return table;
}

}  // namespace ddplaunch::preflight
