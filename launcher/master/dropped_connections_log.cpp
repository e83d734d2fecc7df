// Rate-limited warnings for dropped rendezvous connections (see the header).
#include "master/dropped_connections_log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace ddplaunch {

DroppedConnectionTally::DroppedConnectionTally(std::chrono::milliseconds interval, int logged_per_interval)
    : interval_(interval), logged_per_interval_(logged_per_interval) {}

std::string DroppedConnectionTally::note(Clock::time_point now, const std::string& peer, const std::string& reason) {
  if (!open_ || (counted_ == 0 && now >= interval_end())) {  // a quiet interval ended: start afresh
    open_ = true;
    started_ = now;
    logged_ = 0;
  }
  if (logged_ < logged_per_interval_) {
    ++logged_;
    return fmt::format("rendezvous: dropped {}: {}", peer, reason);
  }
  ++counted_;
  last_peer_ = peer;
  last_reason_ = reason;
  return "";
}

std::string DroppedConnectionTally::summarize() {
  std::string line;
  if (counted_ > 0) {
    line = fmt::format("rendezvous: dropped {} more connection{} in the last {:.1f} s, not logged one by one "
                       "(the latest: {}: {})",
                       counted_, counted_ == 1 ? "" : "s",
                       std::chrono::duration<double>(interval_).count(), last_peer_, last_reason_);
  }
  open_ = false;
  counted_ = 0;
  return line;
}

DroppedConnectionLog::DroppedConnectionLog(boost::asio::io_context& io, std::chrono::milliseconds interval,
                                           int logged_per_interval)
    : tally_(interval, logged_per_interval), timer_(io) {}

void DroppedConnectionLog::note(const std::string& peer, const std::string& reason) {
  if (std::string line = tally_.note(DroppedConnectionTally::Clock::now(), peer, reason); !line.empty()) {
    spdlog::warn("{}", line);
    return;
  }
  if (timer_armed_) return;
  timer_armed_ = true;
  timer_.expires_at(tally_.interval_end());
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    self->timer_armed_ = false;
    if (ec) return;
    if (std::string summary = self->tally_.summarize(); !summary.empty()) spdlog::warn("{}", summary);
  });
}

}  // namespace ddplaunch
