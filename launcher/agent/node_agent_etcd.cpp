// NodeAgent with the coordinator on etcd: the node's side of EtcdNodeLink. When elected it
// hosts the rendezvous and the JobCoordinator; it joins whatever coordinator etcd names; a
// lost coordinator or seat goes to the NodePolicy, which decides (on_coordinator_lost,
// on_seat_lost); the link's news are NodeEvents, handled in node_agent_events.cpp.
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "agent/node_agent.h"

namespace ddplaunch {

std::string NodeAgent::start_etcd() {
  // Its news come back as NodeEvents (publish, node_agent_events.cpp).
  MasterLink& master = *this;
  const NodeView& node = *this;
  NodeEvents& events = *this;
  etcd_ = std::make_unique<EtcdNodeLink>(io_, plan_, master, node, events, host_);
  if (std::string error = etcd_->open(); !error.empty()) {
    etcd_.reset();
    return error;
  }
  open_peer_probe();
  wait_for_signals();
  etcd_->start();
  return {};
}

// A client is closed at once and freed after the event that retired it (its own callback may
// be the caller): a coordinator joined again and again leaves nothing behind.
void NodeAgent::retire_client() {
  if (!client_) return;
  client_->close();
  boost::asio::post(io_, [retired = std::shared_ptr<rendezvous::Client>(std::move(client_))] {});
}

}  // namespace ddplaunch
