// RankFollower: a node's side of `ddplaunch tail --rank R`. The master asks the node of a
// followed rank for its lines for a few seconds at a time (renewed while someone follows);
// the lines are batched (one message per rank every 100 ms at most) and bounded: a rank
// printing faster than the batches carry loses the excess, counted and said in the stream.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/master_link.h"
#include "agent/node_event.h"
#include "wire/launcher_messages.h"

namespace ddplaunch {

class RankFollower {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kBatchInterval = std::chrono::milliseconds(100);

  // The batches go to `master`; a change of the set of followed ranks (for the supervisor's
  // tap) is published to `events` (FollowedRanksChanged).
  RankFollower(boost::asio::io_context& io, MasterLink& master, NodeEvents& events);

  // The master's FollowRank: lines of `rank` for `seconds` from now (0: no more). True when
  // nobody followed that rank until now (the caller sends the lines it already has first).
  bool follow(int rank, int seconds);
  void on_line(int rank, std::string_view line);
  // The waiting lines go now (the workers ended: the master hears them before the node's end).
  void flush();
  void close();  // the node is finishing: no more batches

 private:
  struct Pending {
    std::string lines;
    long dropped = 0;
  };
  void announce_followed();

  boost::asio::steady_timer timer_;
  MasterLink& master_;
  NodeEvents& events_;
  std::map<int, Clock::time_point> leases_;  // rank → until
  std::map<int, Pending> pending_;
  bool flush_armed_ = false;
  bool closed_ = false;
};

}  // namespace ddplaunch
