// RankFollower: leases from the master, and batches of a followed rank's lines.
#include "agent/rank_follower.h"

namespace ddplaunch {

RankFollower::RankFollower(boost::asio::io_context& io, MasterLink& master, NodeEvents& events)
    : timer_(io), master_(master), events_(events) {}

void RankFollower::announce_followed() {
  std::set<int> ranks;
  for (const auto& [rank, until] : leases_) ranks.insert(rank);
  events_.publish(node_event::FollowedRanksChanged{std::move(ranks)});
}

bool RankFollower::follow(int rank, int seconds) {
  if (closed_) return false;
  const bool known = leases_.count(rank) > 0;
  if (seconds <= 0) {
    leases_.erase(rank);
    if (known) announce_followed();
    return false;
  }
  leases_[rank] = Clock::now() + std::chrono::seconds(seconds);
  if (!known) announce_followed();
  return !known;
}

void RankFollower::on_line(int rank, std::string_view line) {
  if (closed_) return;
  Pending& p = pending_[rank];
  if (p.lines.size() + line.size() + 1 > messages::kMaxRankOutputBytes) {
    ++p.dropped;
  } else {
    p.lines.append(line);
    p.lines += '\n';
  }
  if (flush_armed_) return;
  flush_armed_ = true;
  timer_.expires_after(kBatchInterval);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    flush_armed_ = false;
    if (!ec) flush();
  });
}

void RankFollower::flush() {
  for (auto& [rank, p] : pending_)
    if (!p.lines.empty() || p.dropped > 0)
      master_.send(messages::encode(master_.generation(), messages::RankOutput{rank, std::move(p.lines), p.dropped}));
  pending_.clear();
  // Leases that ran out: nobody follows those ranks any more.
  const auto now = Clock::now();
  bool expired = false;
  for (auto it = leases_.begin(); it != leases_.end();)
    if (it->second <= now) it = leases_.erase(it), expired = true;
    else ++it;
  if (expired) announce_followed();
}

void RankFollower::close() {
  closed_ = true;
  timer_.cancel();
  pending_.clear();
}

}  // namespace ddplaunch
