// PeerProbeRun: this node's part of the peer probe. A listener per candidate interface from
// start-up, advertised in the join facts; on the first assignment the node probes its ring
// neighbour (every peer on small jobs) on a thread of its own, off the event loop, and
// reports the links to the master; the workers start on the master's verdict (probe_verdict).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "agent/master_link.h"
#include "agent/node_plan.h"
#include "agent/node_view.h"
#include "ddplaunch/preflight/peer_probe.h"
#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch {

class PeerProbeRun {
 public:
  // The links measured go to `master` while `node` still probes for their generation.
  PeerProbeRun(boost::asio::io_context& io, const NodePlan& plan, const NodeView& node, MasterLink& master);
  ~PeerProbeRun();  // joins the probe thread: bounded, every probe bounds itself

  // Multi-node jobs only: the listeners must be up before the facts go out with the join.
  // Returns the endpoints to advertise (probe_endpoints), none when nothing listens.
  std::optional<std::string> open();
  // Whether assignment `a` is probed first: the first generation of a multi-node job whose
  // every node advertised probe endpoints (the master's rule too, probe_expected).
  bool due(const rendezvous::Assignment& a) const;
  // Probes this node's links for assignment `a` (due) of `generation`, off the loop.
  void start(const rendezvous::Assignment& a, Generation generation);
  void close();  // the listener stops (a running probe thread ends by itself)

 private:
  boost::asio::io_context& io_;
  const NodePlan& plan_;
  const NodeView& node_;
  MasterLink& master_;
  std::unique_ptr<preflight::PeerProbeListener> listener_;  // open from start to the verdict
  std::thread thread_;                                      // this node's probes, off the loop
};

}  // namespace ddplaunch
