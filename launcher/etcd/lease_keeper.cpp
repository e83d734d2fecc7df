// The periodic keepalive of one lease, and the report of its loss; see lease_keeper.h.
#include "etcd/lease_keeper.h"

namespace ddplaunch::etcd {
namespace {

std::chrono::milliseconds interval_of(const LeaseGrant& lease) {
  return std::max(std::chrono::milliseconds(std::chrono::seconds(lease.ttl_s)) / 3, std::chrono::milliseconds(200));
}

}  // namespace

std::shared_ptr<LeaseKeeper> LeaseKeeper::start(std::shared_ptr<Client> client, LeaseGrant lease, OnLost on_lost) {
  auto keeper = std::shared_ptr<LeaseKeeper>(new LeaseKeeper(std::move(client), lease, std::move(on_lost)));
  keeper->arm_loss();
  keeper->arm_tick();
  return keeper;
}

std::shared_ptr<LeaseKeeper> LeaseKeeper::start_tolerant(std::shared_ptr<Client> client, LeaseGrant lease,
                                                       OnLost on_lost, OnReachability on_reachability) {
  auto keeper = std::shared_ptr<LeaseKeeper>(new LeaseKeeper(std::move(client), lease, std::move(on_lost)));
  keeper->on_reachability_ = std::move(on_reachability);
  keeper->arm_loss();
  keeper->arm_tick();
  return keeper;
}

LeaseKeeper::LeaseKeeper(std::shared_ptr<Client> client, LeaseGrant lease, OnLost on_lost)
    : client_(std::move(client)),
      lease_(lease),
      on_lost_(std::move(on_lost)),
      tick_(client_->transport().io()),
      loss_(client_->transport().io()),
      last_ok_(std::chrono::steady_clock::now()) {}

void LeaseKeeper::stop() {
  running_ = false;
  tick_.cancel();
  loss_.cancel();
}

void LeaseKeeper::arm_tick() {
  tick_.expires_after(interval_of(lease_));
  tick_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (auto self = weak.lock(); self && !ec && self->running_) self->send();
  });
}

void LeaseKeeper::arm_loss() {
  loss_.expires_at(last_ok_ + std::chrono::seconds(lease_.ttl_s));
  loss_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self || ec || !self->running_) return;
    if (self->on_reachability_) {  // tolerant: say so once per outage and keep trying
      if (!self->unreachable_) {
        self->unreachable_ = true;
        self->on_reachability_("no keepalive of lease " + std::to_string(self->lease_.id) + " got through for " +
                               std::to_string(self->lease_.ttl_s) + " s; last error: " +
                               (self->last_error_.empty() ? std::string("none (no answer yet)") : self->last_error_));
      }
      return;
    }
    self->lost("etcd did not renew lease " + std::to_string(self->lease_.id) + " for its whole TTL of " +
               std::to_string(self->lease_.ttl_s) + " s, so it has expired with every key bound to it; last error: " +
               (self->last_error_.empty() ? std::string("none (no answer yet)") : self->last_error_));
  });
}

void LeaseKeeper::send() {
  arm_tick();
  if (in_flight_) return;  // the previous keepalive is still bounded by its own timeout
  in_flight_ = true;
  const auto sent = std::chrono::steady_clock::now();
  client_->keep_alive_once(lease_.id, [self = shared_from_this(), sent](Result<std::int64_t> ttl) {
    self->in_flight_ = false;
    if (!self->running_) return;
    if (!ttl) {
      self->last_error_ = ttl.error;
      return;  // the loss timer decides when this has lasted too long
    }
    if (*ttl <= 0) {
      self->lost("etcd no longer knows lease " + std::to_string(self->lease_.id) +
                 ": it expired (its keepalives stopped for longer than its TTL of " +
                 std::to_string(self->lease_.ttl_s) + " s) or was revoked, with every key bound to it");
      return;
    }
    // etcd renewed from when it got the request, which was after `sent`.
    self->last_ok_ = sent;
    self->last_error_.clear();
    self->arm_loss();
    if (self->unreachable_) {
      self->unreachable_ = false;
      if (self->on_reachability_) self->on_reachability_("");
    }
  });
}

void LeaseKeeper::lost(std::string why) {
  stop();
  if (auto report = std::move(on_lost_)) report(why);
}

}  // namespace ddplaunch::etcd
