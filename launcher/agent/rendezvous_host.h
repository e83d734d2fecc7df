// RendezvousHost: what the master node hosts for the job — the rendezvous server, the
// JobCoordinator behind it, and the job's debug console relay — from the listen to the end,
// where the server stays open a little longer while `ddplaunch tail` clients read a followed
// rank's last lines. With etcd, the launcher etcd elected hosts it, and another launcher may
// take it over (drop()).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "master/debug_relay.h"
#include "agent/etcd_node_link.h"
#include "master/job_coordinator.h"
#include "agent/node_plan.h"
#include "ddplaunch/rendezvous/server.h"

namespace ddplaunch {

class RendezvousHost {
 public:
  // `plan` outlives the host (the NodeAgent's).
  RendezvousHost(boost::asio::io_context& io, const NodePlan& plan);

  // Makes the coordinator and listens on `port` (0: any free port), then opens the debug
  // console; `etcd` (nullptr without etcd): the seat that fences and saves the coordinator's
  // decisions. A port another process holds names the holder when /proc shows it.
  rendezvous::ListenError listen(int port, EtcdNodeLink* etcd);
  // Another launcher hosts the job: this one drops its coordinator and server.
  void drop();

  bool hosting() const { return coordinator_ && server_; }
  // The port the server listens on, or `otherwise` when it does not.
  int port_or(int otherwise) const { return server_ ? server_->port() : otherwise; }
  std::size_t joined_nodes() const { return server_ ? server_->joined_nodes().size() : 0; }
  bool job_ended() const { return coordinator_ && coordinator_->job_ended(); }

  // A line typed at the terminal (or the fan-out's) for the debug console.
  void on_console_line(const std::string& line);
  // etcd: a re-elected coordinator's orders carry its new election revision.
  void set_order_revision(std::int64_t revision);
  // etcd: this launcher no longer leads — its coordinator ends, its server closes.
  void stop_coordinating(const std::string& why);

  // The node's end, in the order the NodeAgent needs: the console first (before the ranks'
  // debuggers), the coordinator's timers, and last the server (after this node's own client
  // left it: its job_end flush then waits for no one here).
  void close_console();
  void close_coordinator();
  void close_server();

 private:
  void start_debug_relay();
  void close_server_after_tails(int checks_left);

  static constexpr auto kTailLinger = std::chrono::milliseconds(1000);
  static constexpr int kTailLingerChecks = 20;

  boost::asio::io_context& io_;
  const NodePlan& plan_;
  std::unique_ptr<JobCoordinator> coordinator_;
  std::unique_ptr<rendezvous::Server> server_;
  std::unique_ptr<DebugRelay> debug_relay_;
  boost::asio::steady_timer tail_linger_timer_;  // the master's end: tail clients read the last lines
};

}  // namespace ddplaunch
