// ProbeRound: the master's side of the peer probe for one generation — which
// nodes' results are in, the deadline, and the verdict from preflight::choose_interface.
// Pure. A node with no probe endpoints in its facts (--no-peer-probe there, or no usable
// interface) makes the whole round not happen: every node reaches the same conclusion from
// the same node list (probe_expected), so nobody waits for results or a verdict in vain.
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "ddplaunch/preflight/ring_plan.h"
#include "ddplaunch/rendezvous/types.h"
#include "policy/init_tracker.h"  // PolicyClock

namespace ddplaunch {

// The offers those nodes advertised (undecodable endpoints count as none).
std::vector<preflight::NodeProbeOffer> probe_offers(const std::vector<rendezvous::NodeRecord>& nodes);
// True when a peer probe runs for these offers: several nodes, each advertising endpoints.
bool probe_expected(const std::vector<preflight::NodeProbeOffer>& offers);

class ProbeRound {
 public:
  static constexpr std::chrono::seconds kDeadline{15};  // probes bound themselves to ~5 s

  void begin(const std::vector<rendezvous::NodeRecord>& nodes, Generation generation, PolicyClock::time_point now);
  bool active() const { return active_; }
  Generation generation() const { return generation_; }
  // A node's own links (others' are dropped: a node reports only what it probed). True when
  // every node has reported.
  bool add(int node, std::vector<preflight::ProbedLink> links);
  bool overdue(PolicyClock::time_point now) const { return active_ && now - started_ >= kDeadline; }
  // Ends the round: the verdict over the links received (missing ones are failures).
  // `master_address`: the interface holding it on node 0 is preferred among equals.
  preflight::InterfaceChoice conclude(const std::string& user_variable, const std::string& user_value,
                                      const std::string& master_address);
  const std::vector<preflight::ProbedLink>& links() const { return links_; }

 private:
  friend struct StateFields<ProbeRound>;  // the state document saves every field (policy_state.h)
  bool active_ = false;
  Generation generation_;
  PolicyClock::time_point started_{};
  std::vector<preflight::NodeProbeOffer> offers_;
  std::set<int> reported_;
  std::vector<preflight::ProbedLink> links_;
};

}  // namespace ddplaunch
