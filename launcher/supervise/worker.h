// Worker: the passive record of one worker process (ninja's Subprocess habit). It holds
// state and output; GroupSupervisor owns the only waits and tells it what happened.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "output/line_splitter.h"
#include "output/stream_routing.h"
#include "output/worker_output.h"
#include "policy/failure.h"
#include "policy/rank_phase.h"
#include "ddplaunch/base/exit_status.h"

namespace ddplaunch {

struct Worker {
  static constexpr std::size_t kTailLines = 20;

  Worker(boost::asio::io_context& io, int local, int global)
      : local_rank(local),
        global_rank(global),
        stdout_pipe(io),
        stderr_pipe(io),
        stdin_pipe(io),
        held_lines_timer(io),
        prompt_timer(io),
        settle_timer(io) {}

  int local_rank;
  int global_rank;
  pid_t pid = -1;
  std::string prefix;
  std::string prefix_separator = " ";  // between prefix and line; none after a user's template
  // Only shim reports move a worker out of setup (DESIGN.md "Phases of a worker"); output
  // proves nothing. The phase at exit decides init failure (setup, init) or runtime.
  RankPhase phase = RankPhase::Setup;
  int init_entries = 0;              // init_begin reports: each communicator set-up is init again
  std::string init_failure_detail;   // from the shim's init_failed
  std::optional<ExitStatus> status;  // set once reaped
  int open_pipes = 0;                // stdout/stderr not at EOF yet
  bool failure_reported = false;
  bool foreign_report_seen = false;  // a report for this rank came from outside its process tree
  StreamRouting routing;             // terminal and/or log file per stream (-r, -t, --log-dir, --local-ranks-filter)
  bool paused = false;               // started stopped (--pause-ranks) and not yet resumed
  // Training progress from the shim, for the master's hang detection.
  long steps = 0;                      // steps so far in this generation
  long recent_max_interval_ms = 0;     // longest step interval since the last rank report
  std::chrono::steady_clock::time_point last_progress{};  // last step or section change
  std::string section;                 // open section ("checkpoint"), "" when none
  std::deque<std::string> tail;
  bool tail_ends_in_progress = false;  // tail.back() is a progress segment
  // A post-mortem stop: the tail as it was before the pdb session (the traceback), which the
  // root cause shows rather than the session.
  std::optional<std::deque<std::string>> tail_before_post_mortem;
  LineSplitter stdout_lines, stderr_lines;
  RankLogFile log;
  boost::asio::posix::stream_descriptor stdout_pipe, stderr_pipe;
  // Interactive debugging: the worker's stdin is a pipe from this launcher, its debugger's
  // keyboard. It is "debugging" from its debugger's first prompt on stdout until a line that
  // resumes it (or its exit); meanwhile its stdout is the debugger's and goes to the console.
  boost::asio::posix::stream_descriptor stdin_pipe;
  std::string stdin_queue;     // lines not yet written (bounded: kMaxStdinQueue)
  bool stdin_writing = false;  // an async write is in flight
  bool debugging = false;
  // The process whose debugger is stopped: the rank's pid, or a child's that reads the same
  // pipe (a DataLoader worker's breakpoint); set at each stop.
  pid_t debugger_pid = -1;
  // Prompts the debugger still owes for lines already written that keep it stopped (p, n,
  // ...): a person may type `c` before the prompt of their previous command came; that prompt
  // then answers the old command, and is no new stop.
  int prompts_owed = 0;
  bool gdb_attached = false;  // a person's gdb holds it (`:attach R --gdb`)
  std::string debugger_output;  // whole lines for the console, sent after each read
  // pdb's "> file(line)func()" and "-> code" lines, held back from the terminal for a moment:
  // when its prompt follows they are the stop's (the console names the place), otherwise they
  // are printed as they came (at the next line, or after kHeldLinesWait).
  std::vector<std::string> held_lines;
  boost::asio::steady_timer held_lines_timer;
  static constexpr auto kHeldLinesWait = std::chrono::milliseconds(100);
  static constexpr std::size_t kMaxStdinQueue = 64 * 1024;
  // The rank's own prompt (input(), getpass): an unterminated tail of stdout or stderr that
  // stayed kPromptQuiet is shown at the console and answered there (RankPromptWatch).
  boost::asio::steady_timer prompt_timer;
  std::optional<OutputStream> asking_on;  // the stream whose tail is the prompt the console shows
  std::string asked_text;                 // that tail, as it was when shown
  static constexpr auto kPromptQuiet = std::chrono::milliseconds(100);
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
  // What the master's status table shows: the phase, or how it is held or ended.
  std::string state_text() const {
    if (status) return status->signaled ? "killed:" + signal_name(status->signal) : "exited:" + std::to_string(status->code);
    if (paused) return "paused";
    if (debugging || gdb_attached) return std::string(RankReport::kDebuggingState);
    return std::string(rank_phase_name(phase));
  }
};

}  // namespace ddplaunch
