// The master's warnings about dropped rendezvous connections, rate-limited: a flood of
// strangers must not flood the log. The first few drops of each interval are logged in full,
// the rest counted and summed up once at the end of the interval.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

namespace ddplaunch {

// Pure: which drops are logged and what the summary says. No clock of its own.
class DroppedConnectionTally {
 public:
  using Clock = std::chrono::steady_clock;
  DroppedConnectionTally(std::chrono::milliseconds interval, int logged_per_interval);

  // The line to log now, or "" when this drop is only counted.
  std::string note(Clock::time_point now, const std::string& peer, const std::string& reason);
  // When the current interval ends (meaningful while counted() > 0).
  Clock::time_point interval_end() const { return started_ + interval_; }
  int counted() const { return counted_; }
  // "dropped N more connections in the last 10.0 s ..." for the drops only counted, or "" when
  // none; starts a fresh interval.
  std::string summarize();

 private:
  std::chrono::milliseconds interval_;
  int logged_per_interval_;
  Clock::time_point started_{};
  bool open_ = false;  // an interval is running
  int logged_ = 0, counted_ = 0;
  std::string last_peer_, last_reason_;
};

// The tally on the event loop: logs through spdlog, and a timer brings out each summary.
class DroppedConnectionLog : public std::enable_shared_from_this<DroppedConnectionLog> {
 public:
  explicit DroppedConnectionLog(boost::asio::io_context& io,
                                std::chrono::milliseconds interval = std::chrono::seconds(10),
                                int logged_per_interval = 5);
  void note(const std::string& peer, const std::string& reason);

 private:
  DroppedConnectionTally tally_;
  boost::asio::steady_timer timer_;
  bool timer_armed_ = false;
};

}  // namespace ddplaunch
