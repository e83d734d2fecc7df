// EtcdNodeLink: a node's link to its job's coordinator through etcd. Every launcher registers
// and campaigns (EtcdSeat); the elected one hosts the rendezvous and the JobCoordinator on its
// own address and publishes it; every launcher, the elected one too, joins whatever
// coordinator etcd names, and refuses the orders of a superseded one. A coordinator cut off
// from etcd and from most launchers steps down (MinorityRule). The link keeps what etcd said;
// the node (NodeAgent) owns the client, the coordinator and the NodePolicy that decides, and
// hears of every event through EtcdLinkEvents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "seat/etcd_seat.h"
#include "agent/node_plan.h"
#include "ddplaunch/rendezvous/server.h"
#include "ddplaunch/rendezvous/types.h"
#include "policy/minority_rule.h"

namespace ddplaunch {

// What the link asks of its node, and what it tells it.
struct EtcdLinkEvents {
  std::function<bool()> finished;      // the node has ended: etcd's news is ignored
  std::function<bool()> joining;       // the node has not joined a coordinator yet
  std::function<bool()> connected;     // the node has a rendezvous client
  std::function<bool()> coordinating;  // this launcher hosts the rendezvous and the coordinator
  std::function<std::size_t()> joined_nodes;  // launchers joined to this coordinator now
  std::function<void(const std::string& error)> started;  // registered ("") or etcd unusable
  // Elected: host the rendezvous and the coordinator on `port` (the port taken, when 0).
  std::function<rendezvous::ListenError(int& port)> host_coordinator;
  std::function<void(const std::string& host, int port, int serial)> join;  // connection `serial`
  std::function<void()> retire_client;
  std::function<void(const std::string& why, const std::string& address)> coordinator_lost;
  std::function<void(const std::string& why)> stop_coordinating;  // this launcher's lease is gone
  std::function<void(const std::string& why)> seat_lost;
  std::function<void(std::int64_t revision)> reelected;  // the same coordinator, a newer revision
};

class EtcdNodeLink {
 public:
  EtcdNodeLink(boost::asio::io_context& io, const NodePlan& plan, EtcdLinkEvents events);

  // Registers with etcd; returns "" or an error (nothing to clean up then).
  std::string open();
  // Campaigns and follows the leader; `events.started` says whether etcd could be used.
  void start();
  // Join the newest coordinator etcd named, after a pause of `after_s` seconds (0: now).
  void join_coordinator(double after_s = 0);
  // Bounds the wait for a new coordinator: `over` once `seconds` have passed.
  void wait_for_coordinator(double seconds, std::function<void()> over);
  // The node's connection `serial` to a coordinator was lost (an older connection's loss is ignored).
  void on_connection_lost(int serial, const std::string& why);
  // False: an order of a superseded coordinator (logged).
  bool obeys(const rendezvous::Message& order, int serial);
  // This launcher's lease is gone: if it coordinates, it stops acting at once, and the node ends.
  void lose_seat(const std::string& why);
  // The node ends; `job_ended`: under this coordinator, so no state is left for a later run.
  void close(bool job_ended);

  EtcdSeat& seat() { return *seat_; }
  const std::optional<std::string>& restored_state() const { return restored_state_; }

 private:
  void on_elected(std::optional<std::string> state);
  void on_coordinator(const std::string& address, std::int64_t revision);
  void on_coordinator_lost(const std::string& why);
  void check_minority();  // the coordinator, while etcd does not answer: still with most launchers?

  boost::asio::io_context& io_;
  const NodePlan& plan_;
  EtcdLinkEvents events_;
  std::unique_ptr<EtcdSeat> seat_;
  // The newest coordinator etcd named, and the one the node's client is connected to.
  std::string coordinator_address_;
  std::int64_t coordinator_revision_ = 0, connected_revision_ = 0;
  std::string connected_address_;
  int connection_serial_ = 0;  // the node's client's: callbacks of a retired client are ignored
  std::optional<std::string> restored_state_;    // the last coordinator's, when this one was elected
  boost::asio::steady_timer coordinator_timer_;  // bounds the wait for a new coordinator
  boost::asio::steady_timer join_pause_timer_;   // the pause before joining a missing coordinator again
  boost::asio::steady_timer minority_timer_;     // the coordinator's check while etcd does not answer
  bool etcd_unreachable_ = false;
  MinorityRule minority_rule_;
};

}  // namespace ddplaunch
