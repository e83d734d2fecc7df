// EtcdNodeLink: etcd's news (elected, a coordinator named, the seat lost, etcd unreachable)
// → the node's events; the node's connections to the coordinators etcd names, numbered.
// A lost coordinator is replaced by the next elected launcher, which loads the job's state;
// the nodes stop their workers and join it (NodePolicy::on_coordinator_lost).
#include "agent/etcd_node_link.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/rendezvous_host.h"
#include "wire/order_revision.h"
#include "ddplaunch/base/time_units.h"
#include "ddplaunch/rendezvous/printable.h"

namespace ddplaunch {

EtcdNodeLink::EtcdNodeLink(boost::asio::io_context& io, const NodePlan& plan, MasterLink& master,
                           const NodeView& node, NodeEvents& events, RendezvousHost& host)
    : io_(io),
      plan_(plan),
      master_(master),
      node_(node),
      events_(events),
      host_(host),
      coordinator_timer_(io),
      join_pause_timer_(io),
      minority_timer_(io) {}

std::string EtcdNodeLink::open() {
  auto seat = EtcdSeat::create(io_, plan_.config, plan_.hostname);
  if (!seat) return seat.error;
  seat_ = std::move(*seat.value);
  if (plan_.config.token.empty())  // every launcher says it: any of them may be elected or misled
    spdlog::warn("no rendezvous token: anyone who can write under {} in etcd can name this job's coordinator (and "
                 "send its workers elsewhere), and anyone who reaches the coordinator's port can join; so no "
                 "launcher relays a debugger or follows a rank's output for its coordinator. Set "
                 "DDPLAUNCH_TOKEN or --token-file on every launcher",
                 seat_->prefix());
  return {};
}

void EtcdNodeLink::start() {
  seat_->start(
      SeatCallbacks{
          .on_elected = [this](std::optional<std::string> state) { on_elected(std::move(state)); },
          .on_coordinator = [this](const std::string& address, std::int64_t revision) {
            on_coordinator(address, revision);
          },
          .on_lost = [this](const std::string& why) { lose_seat(why); },
          .on_reachability = [this](const std::string& why) {
            etcd_unreachable_ = !why.empty();
            if (etcd_unreachable_ && host_.hosting()) check_minority();
          },
          .on_reelected = [this](std::int64_t revision) { host_.set_order_revision(revision); },
      },
      [this](const std::string& error) {
        if (!finished()) events_.publish(node_event::CoordinatorStoreChecked{error});
      });
}

// This launcher leads: the node hosts the rendezvous and the coordinator here, then says where.
void EtcdNodeLink::on_elected(std::optional<std::string> state) {
  if (finished()) return;
  restored_state_ = std::move(state);
  events_.publish(node_event::Elected{});  // the node's policy has it host the coordinator (host_coordinator)
}

void EtcdNodeLink::host_coordinator() {
  if (finished()) return;
  int port = plan_.config.etcd.coordinator_port;
  rendezvous::ListenError error = host_.listen(port, this);
  port = host_.port_or(port);  // the port taken, when 0
  if (error.failed()) return lose_seat("this launcher was elected coordinator but " + error.text);
  const std::string& host = plan_.rendezvous_bind.front();
  check_minority();  // from now on, once a second: how many launchers are joined at most
  seat_->publish(host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                                      : fmt::format("{}:{}", host, port));
}

// etcd named the coordinator (a newer election revision, or its address published).
void EtcdNodeLink::on_coordinator(const std::string& address, std::int64_t revision) {
  if (finished()) return;
  coordinator_address_ = address;
  coordinator_revision_ = revision;
  spdlog::info("etcd: the job's coordinator is at {} (election revision {})", rendezvous::printable(address), revision);
  const bool connected = master_.connected();
  if (connected && connected_revision_ == revision) return;
  if (connected && address == connected_address_ && revision > connected_revision_) {
    // The coordinator this node is connected to, elected again after etcd stalled: the live
    // connection is to the same launcher (the address is its own listener), nothing changes.
    spdlog::info("the coordinator at {} was elected again (election revision {}): this node stays joined to it",
                 rendezvous::printable(address), revision);
    connected_revision_ = revision;
    return;
  }
  if (node_.state() == NodeState::Joining) return join_coordinator();  // not in yet: this one, now
  if (connected)  // joined to an older coordinator: superseded (it may be partitioned, not dead)
    return on_coordinator_lost(fmt::format("etcd names a newer coordinator at {} (election revision {} > {})",
                                           address, revision, connected_revision_));
}

void EtcdNodeLink::on_coordinator_lost(const std::string& why) {
  events_.publish(node_event::CoordinatorLeft{});
  events_.publish(node_event::CoordinatorLost{why, coordinator_address_});
}

void EtcdNodeLink::on_connection_lost(int serial, const std::string& why) {
  if (serial == connection_serial_) on_coordinator_lost(why);
}

// Join the newest coordinator etcd named (it may be the one just lost, while its lease has
// not expired yet: the join retries until etcd names the next, which supersedes it).
void EtcdNodeLink::join_coordinator(double after_s) {
  if (after_s > 0) {
    join_pause_timer_.expires_after(seconds_to_ms(after_s));
    join_pause_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) join_coordinator();
    });
    return;
  }
  if (finished() || coordinator_address_.empty()) return;  // on_coordinator joins when one is named
  if (master_.connected() && connected_revision_ == coordinator_revision_) return;
  events_.publish(node_event::CoordinatorLeft{});
  auto endpoint = parse_host_port(coordinator_address_);
  if (!endpoint) return lose_seat("etcd holds a malformed coordinator address '" + rendezvous::printable(coordinator_address_) + "'");
  connected_revision_ = coordinator_revision_;
  connected_address_ = coordinator_address_;
  events_.publish(node_event::CoordinatorNamed{endpoint->host, endpoint->port, ++connection_serial_});
}

void EtcdNodeLink::wait_for_coordinator(double seconds, int serial) {
  coordinator_timer_.expires_after(seconds_to_ms(seconds));
  coordinator_timer_.async_wait([this, serial](const boost::system::error_code& ec) {
    if (!ec) events_.publish(node_event::CoordinatorWaitOver{serial});
  });
}

// The node's connection `serial` carries orders stamped with their coordinator's election
// revision (unstamped: the revision etcd named when the connection was made).
bool EtcdNodeLink::obeys(const rendezvous::Message& order, int serial) {
  const std::int64_t revision = order_revision(order, serial == connection_serial_ ? connected_revision_ : 0);
  if (revision >= coordinator_revision_) return true;
  spdlog::warn("refused an order of the superseded coordinator (election revision {} < {}, the coordinator etcd "
               "names now)",
               revision, coordinator_revision_);
  return false;
}

// A coordinator that loses its lease stops acting at once (a newer coordinator may be
// elected already), and the node ends (NodePolicy::on_seat_lost).
void EtcdNodeLink::lose_seat(const std::string& why) {
  if (finished()) return;
  host_.stop_coordinating(why);
  seat_->stop();
  events_.publish(node_event::SeatLost{why});
}

// The coordinator on the minority side of a partition steps down (MinorityRule says when).
void EtcdNodeLink::check_minority() {
  if (!host_.hosting() || finished()) return;
  if (auto why = minority_rule_.check(etcd_unreachable_, host_.joined_nodes(), PolicyClock::now()))
    return lose_seat(*why);
  minority_timer_.expires_after(MinorityRule::kCheckInterval);
  minority_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) check_minority();
  });
}

// The registration and any candidacy go at once; a job that ended under this coordinator
// leaves no state behind for a later run under the same id.
void EtcdNodeLink::close(bool job_ended) {
  coordinator_timer_.cancel();
  join_pause_timer_.cancel();
  minority_timer_.cancel();
  if (job_ended) seat_->end_run();
  else seat_->stop();
}

}  // namespace ddplaunch
