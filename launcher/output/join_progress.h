// "waiting for nodes: 1/4 joined (missing: node rank 2, 3)" while a job gathers its nodes:
// on a terminal a live line with the seconds waited, redrawn at each update; otherwise a
// plain log line, only when the count or the missing nodes change (or every 30 s).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "output/live_status_line.h"

namespace ddplaunch {

class JoinProgress {
 public:
  using Clock = std::chrono::steady_clock;
  explicit JoinProgress(LiveStatusLine& line) : line_(line) {}
  // Returns the plain line to log now ("" when nothing is to be logged: drawn live, or unchanged).
  std::string update(int joined, int expected, const std::string& missing, Clock::time_point now);

 private:
  LiveStatusLine& line_;
  std::optional<Clock::time_point> first_, last_logged_;
  std::string last_text_;
};

// The launcher's: updates stderr_status_line(), or logs with spdlog.
void show_join_progress(int joined, int expected, const std::string& missing);

}  // namespace ddplaunch
