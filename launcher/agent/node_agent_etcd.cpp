// NodeAgent with the coordinator on etcd: the node's side of EtcdNodeLink. When elected it
// hosts the rendezvous and the JobCoordinator; it joins whatever coordinator etcd names; a
// lost coordinator or seat goes to the NodePolicy, which decides (on_coordinator_lost,
// on_seat_lost).
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "agent/node_agent.h"

namespace ddplaunch {

std::string NodeAgent::start_etcd() {
  etcd_ = std::make_unique<EtcdNodeLink>(
      io_, plan_,
      EtcdLinkEvents{
          .finished = [this] { return policy_.finished(); },
          .joining = [this] { return policy_.state() == NodeState::Joining; },
          .connected = [this] { return client_ != nullptr; },
          .coordinating = [this] { return host_.hosting(); },
          .joined_nodes = [this] { return host_.joined_nodes(); },
          .started =
              [this](const std::string& error) {
                carry_out(error.empty() ? policy_.await_first_coordinator()
                                        : policy_.on_coordinator_store_unusable(error));
              },
          .host_coordinator =
              [this](int& port) {
                policy_.on_elected();
                rendezvous::ListenError error = host_.listen(port, etcd_.get());
                port = host_.port_or(port);
                return error;
              },
          .join =
              [this](const std::string& host, int port, int serial) {
                record_job(host, port);  // etcd: where the first coordinator was; the record keeps this launcher's token
                join_master(host, port, serial);
              },
          .retire_client = [this] { retire_client(); },
          .coordinator_lost =
              [this](const std::string& why, const std::string& address) {
                carry_out(policy_.on_coordinator_lost(why, supervisor_.active(), address));
              },
          .stop_coordinating = [this](const std::string& why) { host_.stop_coordinating(why); },
          .seat_lost = [this](const std::string& why) { carry_out(policy_.on_seat_lost(why, supervisor_.active())); },
          .reelected = [this](std::int64_t revision) { host_.set_order_revision(revision); },
      });
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
