// JoinWatch: while this node has not joined the rendezvous, it probes the master the way the
// job will use it (TCP, no ICMP, never blocking the loop) every few seconds and publishes each
// outcome (JoinProbed) for the node's policy, which says why the node cannot get in and when to
// give up. A node already connected (waiting for the others) is only noted (JoinConnected).
// The node closes the watch once it is in, a hot spare, or ending.
#pragma once

#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/node_event.h"
#include "agent/node_plan.h"
#include "ddplaunch/preflight/tcp_probe.h"
#include "ddplaunch/rendezvous/client.h"

namespace ddplaunch {

class JoinWatch {
 public:
  JoinWatch(boost::asio::io_context& io, const NodePlan& plan, NodeEvents& events);
  // Watches the join of `client` (the node's, which outlives the watch or starts it again).
  void start(const rendezvous::Client& client);
  void close();

 private:
  void arm();
  void on_probe(const preflight::ProbeResult& probe, double interval_s);

  boost::asio::io_context& io_;
  const NodePlan& plan_;
  NodeEvents& events_;
  boost::asio::steady_timer timer_;
  const rendezvous::Client* client_ = nullptr;  // watched until close()
};

}  // namespace ddplaunch
