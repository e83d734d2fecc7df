// Keeps one etcd lease alive: a keepalive every TTL/3 on the caller's io_context, and one
// report when the lease is lost — etcd says it is gone (expired, revoked), or no keepalive
// got through for a whole TTL (etcd unreachable: the lease has expired by then or will at
// once, and every key bound to it — a registration, a leader key — with it).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/steady_timer.hpp>

#include "etcd/client.h"

namespace ddplaunch::etcd {

class LeaseKeeper : public std::enable_shared_from_this<LeaseKeeper> {
 public:
  using OnLost = std::function<void(const std::string& why)>;
  // etcd unreachable (why), or reachable again (""): reported on each change.
  using OnReachability = std::function<void(const std::string& why)>;

  // Starts at once. `on_lost` runs at most once, on the io_context; after it nothing more is sent.
  static std::shared_ptr<LeaseKeeper> start(std::shared_ptr<Client> client, LeaseGrant lease, OnLost on_lost);
  // As above, but a whole TTL without an answer is not the end: etcd may have lost its quorum
  // (then no lease expires either), so `on_reachability` says so and the keepalives go on; the
  // lease is lost only when etcd answers that it is gone (so running workers keep
  // running while etcd is down).
  static std::shared_ptr<LeaseKeeper> start_tolerant(std::shared_ptr<Client> client, LeaseGrant lease,
                                                     OnLost on_lost, OnReachability on_reachability);

  // No more keepalives and no report; the lease then expires after its TTL (revoke it to end
  // it at once). Also what a test does to make a holder vanish.
  void stop();
  bool running() const { return running_; }
  LeaseId lease() const { return lease_.id; }

 private:
  LeaseKeeper(std::shared_ptr<Client> client, LeaseGrant lease, OnLost on_lost);
  void send();
  void arm_tick();
  void arm_loss();
  void lost(std::string why);

  std::shared_ptr<Client> client_;
  LeaseGrant lease_;
  OnLost on_lost_;
  OnReachability on_reachability_;  // set: unreachable is not lost
  bool unreachable_ = false;
  boost::asio::steady_timer tick_;
  boost::asio::steady_timer loss_;  // at the last keepalive that got through + TTL
  std::chrono::steady_clock::time_point last_ok_;
  std::string last_error_;
  bool running_ = true;
  bool in_flight_ = false;
};

}  // namespace ddplaunch::etcd
