// EtcdNodeLink: a node's link to its job's coordinator through etcd. Every launcher registers
// and campaigns (EtcdSeat); the elected one hosts the rendezvous and the JobCoordinator on its
// own address and publishes it; every launcher, the elected one too, joins whatever
// coordinator etcd names, and refuses the orders of a superseded one. A coordinator cut off
// from etcd and from most launchers steps down (MinorityRule). The link keeps what etcd said;
// the node (NodeAgent) owns the client and the NodePolicy that decides, and hears of every
// event as a NodeEvent; the link has the node's RendezvousHost host the coordinator, or stop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/master_link.h"
#include "agent/node_event.h"
#include "agent/node_plan.h"
#include "agent/node_view.h"
#include "seat/etcd_seat.h"
#include "ddplaunch/rendezvous/server.h"
#include "ddplaunch/rendezvous/types.h"
#include "policy/minority_rule.h"

namespace ddplaunch {

class RendezvousHost;

class EtcdNodeLink {
 public:
  // `master`: whether the node has a client; `node`: whether it has joined or ended; its news
  // go to `events`; `host`: where this launcher hosts the coordinator when elected.
  EtcdNodeLink(boost::asio::io_context& io, const NodePlan& plan, MasterLink& master, const NodeView& node,
               NodeEvents& events, RendezvousHost& host);

  // Registers with etcd; returns "" or an error (nothing to clean up then).
  std::string open();
  // Campaigns and follows the leader; CoordinatorStoreChecked says whether etcd could be used.
  void start();
  // Elected (the node's policy said so): host the rendezvous and the coordinator here, then
  // publish where; a port that cannot be bound loses the seat.
  void host_coordinator();
  // Join the newest coordinator etcd named, after a pause of `after_s` seconds (0: now).
  void join_coordinator(double after_s = 0);
  // Bounds the wait for a new coordinator: CoordinatorWaitOver{serial} once `seconds` have passed.
  void wait_for_coordinator(double seconds, int serial);
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
  bool finished() const { return node_.state() == NodeState::Finished; }

  MasterLink& master_;
  const NodeView& node_;
  NodeEvents& events_;
  RendezvousHost& host_;
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
