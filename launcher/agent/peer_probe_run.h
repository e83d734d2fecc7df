// PeerProbeRun: this node's part of the peer probe. A listener per candidate interface from
// start-up, advertised in the join facts; on the first assignment the node probes its ring
// neighbour (every peer on small jobs) on a thread of its own, off the event loop, and
// reports the links to the master; the workers start on the master's verdict
// (probe_verdict), with the assignment the run kept meanwhile.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "agent/node_plan.h"
#include "ddplaunch/preflight/peer_probe.h"
#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch {

// What the run asks of its node when its links are measured.
struct PeerProbeHooks {
  std::function<bool(Generation generation)> wanted;  // the node still probes for `generation`, with a master
  std::function<void(const rendezvous::Message&)> send;
};

class PeerProbeRun {
 public:
  PeerProbeRun(boost::asio::io_context& io, const NodePlan& plan, PeerProbeHooks hooks);
  ~PeerProbeRun();  // joins the probe thread: bounded, every probe bounds itself

  // Multi-node jobs only: the listeners must be up before the facts go out with the join.
  // Returns the endpoints to advertise (probe_endpoints), none when nothing listens.
  std::optional<std::string> open();
  // Probing, when due for assignment `a` in `generation`; false: none is due, nothing started.
  bool start(const rendezvous::Assignment& a, Generation generation);
  bool probing() const { return assignment_.has_value(); }
  // The master's verdict came: the listener closes; the workers start with this assignment.
  rendezvous::Assignment end();
  void close();  // the listener stops (a running probe thread ends by itself)

 private:
  boost::asio::io_context& io_;
  const NodePlan& plan_;
  PeerProbeHooks hooks_;
  std::unique_ptr<preflight::PeerProbeListener> listener_;  // open from start to the verdict
  std::thread thread_;                                      // this node's probes, off the loop
  std::optional<rendezvous::Assignment> assignment_;        // started after the verdict
};

}  // namespace ddplaunch
