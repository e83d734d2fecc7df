// Worker: the passive record of one worker process (ninja's Subprocess habit). It holds
// state and output; GroupSupervisor owns the only waits and tells it what happened.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "output/line_splitter.h"
#include "output/worker_output.h"
#include "supervise/exit_status.h"

namespace ddplaunch {

enum class InitState {
  Pending,       // started, nothing known yet
  Begun,         // shim said init_begin: only init_ok counts from now on
  Initialized,   // shim init_ok, or (no shim) first output / grace time passed
  Failed,        // shim init_failed, init deadline passed, or died before init
};

enum class FailurePhase { Init, Runtime };

struct WorkerFailure {
  int node_rank = 0;
  int global_rank = 0;
  int local_rank = 0;
  pid_t pid = 0;
  FailurePhase phase = FailurePhase::Init;
  std::string kind;             // "exited", "init_failed", "init_timeout", "spawn_failed"
  std::optional<ExitStatus> status;
  std::string detail;           // shim's error text, signature match, ...
  std::deque<std::string> tail; // last output lines
};

struct Worker {
  static constexpr std::size_t kTailLines = 20;

  Worker(boost::asio::io_context& io, int local, int global)
      : local_rank(local), global_rank(global), stdout_pipe(io), stderr_pipe(io), settle_timer(io) {}

  int local_rank;
  int global_rank;
  pid_t pid = -1;
  std::string prefix;
  InitState init = InitState::Pending;
  bool shim_seen = false;        // any status message from this rank
  std::string init_detail;       // from init_failed
  std::optional<ExitStatus> status;  // set once reaped
  int open_pipes = 0;            // stdout/stderr not at EOF yet
  bool failure_reported = false;
  bool stop_requested = false;
  bool paused = false;           // started stopped (--pause-ranks) and not yet resumed
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point last_heartbeat;
  std::deque<std::string> tail;
  bool tail_ends_in_progress = false;  // tail.back() is a progress segment
  LineSplitter stdout_lines, stderr_lines;
  RankLogFile log;
  boost::asio::posix::stream_descriptor stdout_pipe, stderr_pipe;
  boost::asio::steady_timer settle_timer;  // after init_failed: wait briefly for its exit and last words
  char stdout_buffer[8192];
  char stderr_buffer[8192];

  bool finished() const { return status.has_value() && open_pipes == 0; }
  // A run of progress segments ('\r' redraws, see line_splitter.h) keeps only its latest one.
  void remember(std::string_view line) {
    const bool progress = is_progress_segment(line);
    line = without_progress_mark(line);
    if (progress && !tail.empty() && tail_ends_in_progress) {
      tail.back().assign(line);
      return;
    }
    tail_ends_in_progress = progress;
    tail.emplace_back(line);
    if (tail.size() > kTailLines) tail.pop_front();
  }
};

}  // namespace ddplaunch
