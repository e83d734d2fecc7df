// Worker: the passive record of one worker process (ninja's Subprocess habit). It holds
// state and output; GroupSupervisor owns the only waits and tells it what happened.
//
// Its state comes in blocks, one per part of the supervision that writes it: the block's
// fields are private and only its writer (a friend) changes them; everyone else reads them
// through const accessors. A part that needs another block changed asks that block's writer.
//
//   block      writer               holds
//   process    GroupSupervisor      pid, exit status, whether its failure was reported
//   signals    WorkerSignals        started stopped (--pause-ranks) and not yet resumed
//   phases     ShimReports          phase, init entries, the shim's init failure
//   progress   record_progress      steps, longest recent interval, open section
//   output     WorkerOutputRouter   pipes, line splitters, routing, tail, rank log
//   debugger   DebuggerWatch        its debugger (pdb or a person's gdb), its keyboard (stdin)
//   prompt     RankPromptWatch      the rank's own prompt shown at the console
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

#include "ddplaunch/base/exit_status.h"
#include "ddplaunch/contract.h"
#include "output/line_splitter.h"
#include "output/stream_routing.h"
#include "output/worker_output.h"
#include "policy/failure.h"
#include "policy/rank_phase.h"

namespace ddplaunch {

class GroupSupervisor;
class WorkerSignals;
class ShimReports;
class WorkerOutputRouter;
class DebuggerWatch;
class RankPromptWatch;
struct Worker;
// Unit tests set up a worker as its parts would have (tests/unit/support/worker_test_access.h).
struct WorkerTestAccess;
bool record_progress(Worker& worker, const contract::StatusMessage& message);
RankReport rank_report_of(Worker& worker);

// A block is changed only by its writer: it is neither copied nor assigned from outside.
struct WorkerBlock {
  WorkerBlock() = default;
  WorkerBlock(const WorkerBlock&) = delete;
  WorkerBlock& operator=(const WorkerBlock&) = delete;
};

class WorkerProcess : WorkerBlock {
 public:
  pid_t pid() const { return pid_; }
  const std::optional<ExitStatus>& status() const { return status_; }  // set once reaped
  bool failure_reported() const { return failure_reported_; }

 private:
  friend class GroupSupervisor;
  friend struct WorkerTestAccess;
  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
  bool failure_reported_ = false;
};

class WorkerSignalState : WorkerBlock {
 public:
  bool paused() const { return paused_; }  // started stopped (--pause-ranks) and not yet resumed

 private:
  friend class WorkerSignals;
  bool paused_ = false;
};

// Only shim reports move a worker out of setup (DESIGN.md "Phases of a worker"); output
// proves nothing. The phase at exit decides init failure (setup, init) or runtime.
class WorkerPhases : WorkerBlock {
 public:
  explicit WorkerPhases(boost::asio::io_context& io) : settle_timer_(io) {}
  RankPhase phase() const { return phase_; }
  int init_entries() const { return init_entries_; }  // init_begin reports: each communicator set-up is init again
  const std::string& init_failure_detail() const { return init_failure_detail_; }  // from the shim's init_failed

 private:
  friend class ShimReports;
  friend struct WorkerTestAccess;
  RankPhase phase_ = RankPhase::Setup;
  int init_entries_ = 0;
  std::string init_failure_detail_;
  bool foreign_report_seen_ = false;      // a report for this rank came from outside its process tree
  boost::asio::steady_timer settle_timer_;  // after init_failed: wait briefly for its exit and last words
};

// Training progress from the shim, for the master's hang detection.
class WorkerProgress : WorkerBlock {
 public:
  long steps() const { return steps_; }  // steps so far in this generation
  const std::string& section() const { return section_; }  // open section ("checkpoint"), "" when none

 private:
  friend bool record_progress(Worker& worker, const contract::StatusMessage& message);
  friend RankReport rank_report_of(Worker& worker);
  long steps_ = 0;
  long recent_max_interval_ms_ = 0;  // longest step interval since the last rank report
  long recent_span_ms_ = -1;         // wall time / wait in collectives the shim measured since then
  long recent_wait_ms_ = -1;         // (-1: nothing measured)
  std::chrono::steady_clock::time_point last_progress_{};  // last step or section change
  std::string section_;
};

class WorkerOutputState : WorkerBlock {
 public:
  static constexpr std::size_t kTailLines = 20;
  static constexpr auto kHeldLinesWait = std::chrono::milliseconds(100);

  explicit WorkerOutputState(boost::asio::io_context& io)
      : stdout_pipe_(io), stderr_pipe_(io), held_lines_timer_(io) {}
  const StreamRouting& routing() const { return routing_; }
  int open_pipes() const { return open_pipes_; }  // stdout/stderr not at EOF yet
  const std::deque<std::string>& tail() const { return tail_; }  // its last lines, for failure reports
  const LineSplitter& lines(OutputStream stream) const {
    return stream == OutputStream::Stdout ? stdout_lines_ : stderr_lines_;
  }
  const RankLogFile& log() const { return log_; }

 private:
  friend class WorkerOutputRouter;
  friend struct WorkerTestAccess;
  LineSplitter& splitter(OutputStream stream) { return stream == OutputStream::Stdout ? stdout_lines_ : stderr_lines_; }
  // A run of progress segments ('\r' redraws, see line_splitter.h) keeps only its latest one.
  void remember(std::string_view line) {
    const bool progress = is_progress_segment(line);
    line = without_progress_mark(line);
    if (progress && !tail_.empty() && tail_ends_in_progress_) {
      tail_.back().assign(line);
      return;
    }
    tail_ends_in_progress_ = progress;
    tail_.emplace_back(line);
    if (tail_.size() > kTailLines) tail_.pop_front();
  }

  StreamRouting routing_;  // terminal and/or log file per stream (-r, -t, --log-dir, --local-ranks-filter)
  int open_pipes_ = 0;
  std::deque<std::string> tail_;
  bool tail_ends_in_progress_ = false;  // tail_.back() is a progress segment
  LineSplitter stdout_lines_, stderr_lines_;
  RankLogFile log_;
  boost::asio::posix::stream_descriptor stdout_pipe_, stderr_pipe_;
  // pdb's "> file(line)func()" and "-> code" lines, held back from the terminal for a moment:
  // when its prompt follows they are the stop's (the console names the place), otherwise they
  // are printed as they came (at the next line, or after kHeldLinesWait).
  std::vector<std::string> held_lines_;
  boost::asio::steady_timer held_lines_timer_;
  char stdout_buffer_[8192];
  char stderr_buffer_[8192];
};

// Interactive debugging: the worker's stdin is a pipe from this launcher, its debugger's
// keyboard. It is "debugging" from its debugger's first prompt on stdout until a line that
// resumes it (or its exit); meanwhile its stdout is the debugger's and goes to the console.
class WorkerDebugger : WorkerBlock {
 public:
  static constexpr std::size_t kMaxStdinQueue = 64 * 1024;

  explicit WorkerDebugger(boost::asio::io_context& io) : stdin_pipe_(io) {}
  bool debugging() const { return debugging_; }
  // The process whose debugger is stopped: the rank's pid, or a child's that reads the same
  // pipe (a DataLoader worker's breakpoint); set at each stop.
  pid_t pid() const { return pid_; }
  bool gdb_attached() const { return gdb_attached_; }  // a person's gdb holds it (`:attach R --gdb`)
  bool keyboard_open() const { return stdin_pipe_.is_open(); }
  // A post-mortem stop: the tail as it was before the pdb session (the traceback), which the
  // root cause shows rather than the session.
  const std::optional<std::deque<std::string>>& tail_before_post_mortem() const { return tail_before_post_mortem_; }

 private:
  friend class DebuggerWatch;
  friend struct WorkerTestAccess;
  bool debugging_ = false;
  pid_t pid_ = -1;
  // Prompts the debugger still owes for lines already written that keep it stopped (p, n,
  // ...): a person may type `c` before the prompt of their previous command came; that prompt
  // then answers the old command, and is no new stop.
  int prompts_owed_ = 0;
  bool gdb_attached_ = false;
  std::string output_;  // whole lines for the console, sent after each read
  std::optional<std::deque<std::string>> tail_before_post_mortem_;
  boost::asio::posix::stream_descriptor stdin_pipe_;
  std::string stdin_queue_;     // lines not yet written (bounded: kMaxStdinQueue)
  bool stdin_writing_ = false;  // an async write is in flight
};

// The rank's own prompt (input(), getpass): an unterminated tail of stdout or stderr that
// stayed kPromptQuiet is shown at the console and answered there.
class WorkerPrompt : WorkerBlock {
 public:
  static constexpr auto kPromptQuiet = std::chrono::milliseconds(100);

  explicit WorkerPrompt(boost::asio::io_context& io) : timer_(io) {}
  const std::optional<OutputStream>& asking_on() const { return asking_on_; }  // the stream whose tail is the prompt shown
  const std::string& asked_text() const { return asked_text_; }  // that tail, as it was when shown

 private:
  friend class RankPromptWatch;
  boost::asio::steady_timer timer_;
  std::optional<OutputStream> asking_on_;
  std::string asked_text_;
};

struct Worker {
  static constexpr std::size_t kTailLines = WorkerOutputState::kTailLines;
  static constexpr std::size_t kMaxStdinQueue = WorkerDebugger::kMaxStdinQueue;

  // `prefix_separator`: between prefix and line; none after a user's template.
  Worker(boost::asio::io_context& io, int local, int global, std::string line_prefix = {},
         std::string line_prefix_separator = " ")
      : local_rank(local),
        global_rank(global),
        prefix(std::move(line_prefix)),
        prefix_separator(std::move(line_prefix_separator)),
        phases(io),
        output(io),
        debugger(io),
        prompt(io) {}

  const int local_rank;
  const int global_rank;
  const std::string prefix;
  const std::string prefix_separator;
  WorkerProcess process;
  WorkerSignalState signals;
  WorkerPhases phases;
  WorkerProgress progress;
  WorkerOutputState output;
  WorkerDebugger debugger;
  WorkerPrompt prompt;

  bool finished() const { return process.status().has_value() && output.open_pipes() == 0; }
  // What the master's status table shows: the phase, or how it is held or ended.
  std::string state_text() const {
    if (const auto& status = process.status())
      return status->signaled ? "killed:" + signal_name(status->signal) : "exited:" + std::to_string(status->code);
    if (signals.paused()) return "paused";
    if (debugger.debugging() || debugger.gdb_attached()) return std::string(RankReport::kDebuggingState);
    return std::string(rank_phase_name(phases.phase()));
  }
};

}  // namespace ddplaunch
