// NodeAgent with the coordinator on etcd: every launcher registers and campaigns
// (EtcdSeat); the elected one hosts the rendezvous and the JobCoordinator on its own address
// and publishes it; every launcher, the elected one too, joins whatever coordinator etcd
// names. A lost coordinator is replaced by the next elected launcher, which loads the job's
// state; the nodes stop their workers and join it (NodePolicy::on_coordinator_lost).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/node_agent.h"
#include "ddplaunch/base/exit_codes.h"
#include "ddplaunch/base/time_units.h"
#include "ddplaunch/rendezvous/printable.h"

namespace ddplaunch {

std::string NodeAgent::start_etcd() {
  auto seat = EtcdSeat::create(io_, plan_.config, plan_.hostname);
  if (!seat) return seat.error;
  seat_ = std::move(*seat.value);
  if (plan_.config.token.empty())  // every launcher says it: any of them may be elected or misled
    spdlog::warn("no rendezvous token: anyone who can write under {} in etcd can name this job's coordinator (and "
                 "send its workers elsewhere), and anyone who reaches the coordinator's port can join; set "
                 "DDPLAUNCH_TOKEN or --token-file on every launcher",
                 seat_->prefix());
  open_peer_probe();
  wait_for_signals();
  seat_->start(
      SeatCallbacks{
          .on_elected = [this](std::optional<std::string> state) { on_elected(std::move(state)); },
          .on_coordinator = [this](const std::string& address, std::int64_t revision) {
            on_coordinator(address, revision);
          },
          .on_lost = [this](const std::string& why) { on_seat_lost(why); },
          .on_reachability = [this](const std::string& why) {
            etcd_unreachable_ = !why.empty();
            if (etcd_unreachable_ && coordinator_) check_minority();
          },
          .on_reelected = [this](std::int64_t revision) {
            if (server_) server_->set_order_revision(std::to_string(revision));
          },
      },
      [this](const std::string& error) {
        if (policy_.finished()) return;
        carry_out(error.empty() ? policy_.await_first_coordinator() : policy_.on_coordinator_store_unusable(error));
      });
  return {};
}

// This launcher leads: host the rendezvous and the coordinator here, then say where.
void NodeAgent::on_elected(std::optional<std::string> state) {
  if (policy_.finished()) return;
  restored_state_ = std::move(state);
  policy_.on_elected();
  int port = plan_.config.etcd.coordinator_port;
  if (rendezvous::ListenError error = host_rendezvous(port); error.failed())
    return on_seat_lost("this launcher was elected coordinator but " + error.text);
  const std::string& host = plan_.rendezvous_bind.front();
  check_minority();  // from now on, once a second: how many launchers are joined at most
  seat_->publish(host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                                      : fmt::format("{}:{}", host, port));
}

// etcd named the coordinator (a newer election revision, or its address published).
void NodeAgent::on_coordinator(const std::string& address, std::int64_t revision) {
  if (policy_.finished()) return;
  coordinator_address_ = address;
  coordinator_revision_ = revision;
  spdlog::info("etcd: the job's coordinator is at {} (election revision {})", rendezvous::printable(address), revision);
  if (client_ && connected_revision_ == revision) return;
  if (client_ && address == connected_address_ && revision > connected_revision_) {
    // The coordinator this node is connected to, elected again after etcd stalled: the live
    // connection is to the same launcher (the address is its own listener), nothing changes.
    spdlog::info("the coordinator at {} was elected again (election revision {}): this node stays joined to it",
                 rendezvous::printable(address), revision);
    connected_revision_ = revision;
    return;
  }
  if (policy_.state() == NodeState::Joining) return join_coordinator();  // not in yet: this one, now
  if (client_)  // joined to an older coordinator: superseded (it may be partitioned, not dead)
    return on_coordinator_lost(fmt::format("etcd names a newer coordinator at {} (election revision {} > {})",
                                           address, revision, connected_revision_));
}

void NodeAgent::on_coordinator_lost(const std::string& why) {
  retire_client();
  carry_out(policy_.on_coordinator_lost(why, supervisor_.active(), coordinator_address_));
}

// Join the newest coordinator etcd named (it may be the one just lost, while its lease has
// not expired yet: the join retries until etcd names the next, which supersedes it).
void NodeAgent::join_coordinator() {
  if (policy_.finished() || coordinator_address_.empty()) return;  // on_coordinator joins when one is named
  if (client_ && connected_revision_ == coordinator_revision_) return;
  retire_client();
  auto endpoint = parse_host_port(coordinator_address_);
  if (!endpoint) return on_seat_lost("etcd holds a malformed coordinator address '" + rendezvous::printable(coordinator_address_) + "'");
  connected_revision_ = coordinator_revision_;
  connected_address_ = coordinator_address_;
  join_master(endpoint->host, endpoint->port, ++connection_serial_);
}

// A client is closed at once and freed after the event that retired it (its own callback may
// be the caller): a coordinator joined again and again leaves nothing behind.
void NodeAgent::retire_client() {
  if (!client_) return;
  client_->close();
  boost::asio::post(io_, [retired = std::shared_ptr<rendezvous::Client>(std::move(client_))] {});
}

// This launcher's lease is gone: if it coordinates, it stops acting at once (a newer
// coordinator may be elected already), and the node ends (NodePolicy::on_seat_lost).
void NodeAgent::on_seat_lost(const std::string& why) {
  if (policy_.finished()) return;
  if (coordinator_) {
    spdlog::error("this launcher stops coordinating the job: {}", why);
    coordinator_->close();
    if (server_) server_->close();
  }
  if (seat_) seat_->stop();
  carry_out(policy_.on_seat_lost(why, supervisor_.active()));
}

// The coordinator on the minority side of a partition steps down (MinorityRule says when).
void NodeAgent::check_minority() {
  if (!coordinator_ || !server_ || policy_.finished()) return;
  if (auto why = minority_rule_.check(etcd_unreachable_, server_->joined_nodes().size(), PolicyClock::now()))
    return on_seat_lost(*why);
  minority_timer_.expires_after(MinorityRule::kCheckInterval);
  minority_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) check_minority();
  });
}

bool NodeAgent::obeys(std::int64_t revision) {
  if (!seat_ || revision >= coordinator_revision_) return true;
  spdlog::warn("refused an order of the superseded coordinator (election revision {} < {}, the coordinator etcd "
               "names now)",
               revision, coordinator_revision_);
  return false;
}

}  // namespace ddplaunch
