// JoinWatch: while this node has not joined the rendezvous, it probes the master the way the
// job will use it (TCP, no ICMP, never blocking the loop) every few seconds and hands each
// outcome to the node's policy, which says why the node cannot get in and when to give up.
// A node already connected (waiting for the others) is only noted.
#pragma once

#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/node_plan.h"
#include "ddplaunch/preflight/tcp_probe.h"
#include "policy/node_policy.h"

namespace ddplaunch {

struct JoinWatchHooks {
  std::function<bool()> joining;    // still joining (not a spare, not finished): keep watching
  std::function<bool()> connected;  // the rendezvous connection is up (the other nodes are awaited)
  std::function<void()> on_connected;
  // One probe's outcome (`interval_s`: the time between probes); true: watch on.
  std::function<bool(JoinProbe outcome, const std::string& message, double interval_s)> on_probe;
};

class JoinWatch {
 public:
  JoinWatch(boost::asio::io_context& io, const NodePlan& plan, JoinWatchHooks hooks);
  void start();
  void close() { timer_.cancel(); }

 private:
  void on_probe(const preflight::ProbeResult& probe, double interval_s);

  boost::asio::io_context& io_;
  const NodePlan& plan_;
  JoinWatchHooks hooks_;
  boost::asio::steady_timer timer_;
};

}  // namespace ddplaunch
