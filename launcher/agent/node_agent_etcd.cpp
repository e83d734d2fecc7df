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

namespace {
// How long etcd may not answer on the majority side of a partition that took its leader away,
// before it elects another: its election timeout (1 s by default), three times over for a
// loaded machine, where an election measured up to 2 s (a coordinator on the majority side
// that stepped down in that moment lost the job a launcher it needed).
constexpr auto kMinorityConfirm = std::chrono::milliseconds(3000);
}  // namespace

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
        if (error.empty()) return carry_out(policy_.await_first_coordinator());
        spdlog::error("{}", error);
        finish(kExitConfigError);
      });
  return {};
}

// This launcher leads: host the rendezvous and the coordinator here, then say where.
void NodeAgent::on_elected(std::optional<std::string> state) {
  if (policy_.finished()) return;
  restored_state_ = std::move(state);
  plan_.host_server = true;
  int port = plan_.config.etcd.coordinator_port;
  if (std::string error = host_rendezvous(port); !error.empty())
    return on_seat_lost("this launcher was elected coordinator but " + error);
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

// A coordinator that etcd does not answer cannot tell a lost quorum (the job should go on)
// from its own partition (another launcher may lead already). It goes on only while more than
// half of the most launchers ever joined to it are still here; on the minority side of a
// partition it stops acting and stops its workers (at most one side trains). The condition
// must hold for kMinorityConfirm: etcd also stops answering on the majority side for about
// its election timeout when the partition took its leader away, and a coordinator that lost
// half of the launchers in the same cut must not take that moment for being cut off itself.
void NodeAgent::check_minority() {
  if (!coordinator_ || !server_ || policy_.finished()) return;
  const std::size_t joined = server_->joined_nodes().size();
  most_launchers_ = std::max(most_launchers_, joined);
  const bool minority = etcd_unreachable_ && joined * 2 <= most_launchers_ && most_launchers_ > 1;
  const auto now = std::chrono::steady_clock::now();
  if (!minority) minority_since_.reset();
  else if (!minority_since_) minority_since_ = now;
  else if (now - *minority_since_ >= kMinorityConfirm)
    return on_seat_lost(fmt::format("this coordinator reaches neither etcd nor most of the job's launchers ({} of {} "
                                    "still joined): it is on the minority side of a partition",
                                    joined, most_launchers_));
  minority_timer_.expires_after(std::chrono::seconds(1));
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
