// ProbeRound: see probe_round.h.
#include "policy/probe_round.h"

#include <algorithm>

namespace ddplaunch {

std::vector<preflight::NodeProbeOffer> probe_offers(const std::vector<rendezvous::NodeRecord>& nodes) {
  std::vector<preflight::NodeProbeOffer> offers;
  for (const auto& n : nodes) {
    auto endpoints = preflight::decode_endpoints(n.facts.probe_endpoints);
    offers.push_back({n.node_rank, n.facts.hostname, endpoints ? *endpoints : std::vector<preflight::ProbeEndpoint>{}});
  }
  return offers;
}

bool probe_expected(const std::vector<preflight::NodeProbeOffer>& offers) {
  if (offers.size() < 2) return false;
  return std::all_of(offers.begin(), offers.end(), [](const auto& o) { return !o.endpoints.empty(); });
}

void ProbeRound::begin(const std::vector<rendezvous::NodeRecord>& nodes, Generation generation,
                       PolicyClock::time_point now) {
  offers_ = probe_offers(nodes);
  active_ = probe_expected(offers_);
  generation_ = generation;
  started_ = now;
  reported_.clear();
  links_.clear();
}

bool ProbeRound::add(int node, std::vector<preflight::ProbedLink> links) {
  if (!active_) return false;
  for (auto& l : links)
    if (l.pair.from == node) links_.push_back(std::move(l));
  reported_.insert(node);
  return reported_.size() >= offers_.size();
}

preflight::InterfaceChoice ProbeRound::conclude(const std::string& user_variable, const std::string& user_value,
                                                const std::string& master_address) {
  active_ = false;
  std::string preferred;
  for (const auto& o : offers_)
    if (o.node == 0)
      for (const auto& e : o.endpoints)
        if (e.address == master_address) preferred = e.ifname;
  return preflight::choose_interface(offers_, links_, user_variable, user_value, 4.0, preferred);
}

}  // namespace ddplaunch
