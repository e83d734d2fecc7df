// GroupSupervisor: the process set of one node (ninja's SubprocessSet habit). It starts
// this node's workers for one generation and owns every wait on them — SIGCHLD, output,
// shim reports, stop grace — inside the one Asio event loop, and hands back one outcome
// per generation. It reports what happened; deciding what to do is the JobPolicy's job.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "ddplaunch/contract.h"
#include "env/worker_environment.h"
#include "debug/pdb_text.h"
#include "placement/cpu_placement.h"
#include "supervise/orphan_guard.h"
#include "supervise/rank_line_printer.h"
#include "supervise/worker.h"

namespace ddplaunch {

struct GroupSpec {
  std::vector<std::string> program;
  NodeAssignment assignment;
  Environment base_env;          // launcher env + shim additions (LD_PRELOAD, PYTHONPATH)
  std::string hostname;
  std::string log_dir;           // "" = no log files
  std::vector<int> pause_ranks;  // global ranks started stopped
  std::vector<int> local_ranks_filter;  // only these local ranks on the terminal (empty: all)
  std::vector<int> ranks_filter;        // only these global ranks on the terminal (empty: all)
  double init_grace_s = 0;       // opt-in: workers with no shim report count as running after this long
  std::string redirects, tee;    // torchrun's -r / -t specs (output/stream_routing.h)
  std::vector<placement::WorkerPlacement> placement;  // by local rank (--numa-binding); empty: none
  bool virtual_local_rank = false;  // LOCAL_RANK=0, CUDA_VISIBLE_DEVICES narrowed to the worker's GPU
  // Each worker's stdin is a pipe from this launcher (its debugger's keyboard, fed by the
  // debug console), unless ddplaunch itself was given data on stdin: then the workers share
  // that stdin as under torchrun (docs/TORCHRUN-COMPAT.md).
  bool inherit_stdin = false;
  // Identical lines of several ranks within a short window print once, naming the ranks.
  bool collapse_lines = false;
};

struct GroupOutcome {  // every worker of one generation reaped and its output drained
  long generation = 0;
  std::vector<std::pair<int, ExitStatus>> statuses;  // (global rank, status), by local rank
};

struct GroupCallbacks {
  std::function<void(const WorkerFailure&)> on_failure;   // first failure of each worker
  std::function<void()> on_phases_changed;              // a worker moved phase (shim report, exit)
  std::function<void(const Worker&)> on_paused;           // started stopped, waiting for a debugger
  std::function<void(const GroupOutcome&)> on_finished;   // once per started generation
  std::function<void()> drain_status;                     // read queued shim reports now
  // Interactive debugging: a worker's debugger showed its first prompt (stopped at `where`;
  // `reason` "raised ValueError" for a --post-mortem stop, "" for a breakpoint),
  // wrote output (whole lines) and maybe prompted again, or let the worker run on / exited.
  std::function<void(const Worker&, const debug::StopLocation& where, const std::string& reason)> on_debugger_stopped;
  std::function<void(const Worker&, const std::string& lines, bool prompt)> on_debugger_output;
  std::function<void(const Worker&)> on_debugger_left;
  // `ddplaunch tail`: a line of a followed rank (follow_ranks), as printed, without its newline.
  std::function<void(int global_rank, std::string_view line)> on_followed_line;
};

// What the node tells the master about one worker: phase, state and progress. Takes the
// worker's recent longest step interval (each interval is reported once).
RankReport rank_report_of(Worker& worker);
// A worker traced by a debugger the launcher did not start (`gdb -p PID`): a person holds it.
// (The launcher's own stack tools are its children, and let go within their deadline.)
bool traced_by_a_person(pid_t pid);

class GroupSupervisor {
 public:
  GroupSupervisor(boost::asio::io_context& io, OrphanGuard& guard, GroupCallbacks callbacks);
  ~GroupSupervisor();

  // Spawns every local worker. A worker that cannot be started is reported through
  // on_failure (kind SpawnFailed, or SpawnNoResources when the node ran out of processes,
  // memory or descriptors) and the rest are stopped. Once every worker of the generation
  // is reaped, what they started is swept (descendant_sweep.h).
  void start(const GroupSpec& spec);
  // SIGTERM every worker's process group, SIGKILL after `grace`; a second call with 0 kills
  // at once. Does nothing when no worker is active.
  void stop(std::chrono::milliseconds grace);
  void handle_status(const contract::StatusMessage& message);
  void resume_paused();      // SIGCONT to workers started with --pause-ranks
  // A line for the debugger of a rank stopped in one; false when that rank is not this
  // node's, not stopped, or its keyboard is full or closed. A line that resumes or quits the
  // debugger ends the rank's debugging state.
  bool debugger_input(int global_rank, const std::string& line);
  // Slurm's checkpoint-before-preemption signals (SIGUSR1/SIGUSR2): to every running
  // worker's own process (not its group: a data-loader child that does not handle them
  // would die). Returns how many workers were signalled.
  int forward_signal(int signal);
  void close();              // kill what is left and stop waiting (the node is finishing)

  bool active() const;       // some worker not yet finished
  // The TORCHELASTIC_ERROR_FILE a rank of the current generation was given ("" when none).
  std::string error_file_of(int global_rank) const;
  const std::vector<std::shared_ptr<Worker>>& workers() const { return workers_; }
  // The console's `:ranks`: the terminal shows only these global ranks' lines from now on
  // (empty: every rank); log files and failure reports are unaffected, a rank in its debugger
  // is still shown at the console.
  void show_ranks(const std::vector<int>& ranks_filter);
  // `ddplaunch tail`: these global ranks' lines also go to on_followed_line.
  void follow_ranks(std::set<int> ranks) { followed_ = std::move(ranks); }

 private:
  void wait_for_child_exits();
  void reap_exited_children();
  void read_output(Worker& worker, bool is_stdout);
  void on_line(Worker& worker, OutputStream stream, std::string_view line);
  void set_phase(Worker& worker, RankPhase phase);
  // After each stdout chunk: did the worker's debugger prompt (debug/pdb_text.h)?
  void notice_debugger(Worker& worker);
  void leave_debugger(Worker& worker);
  void print_held_lines(Worker& worker);  // pdb-like lines held back: they were the program's
  void write_stdin(const std::shared_ptr<Worker>& worker);
  // A step or section report (progress_record.cpp); true when the master should hear at once
  // (a section opened or closed), false when the periodic report is soon enough (steps).
  static bool record_progress(Worker& worker, const contract::StatusMessage& message);
  void reap(Worker& worker, int wait_status);
  void sweep_descendants_if_all_reaped();
  void sweep() const;  // what the job left behind; never the guard nor the launcher's own tools
  void on_worker_finished(Worker& worker);
  void deliver_outcome_if_done();
  void report_failure(Worker& worker, FailurePhase phase, FailureKind kind, std::string detail,
                      std::string init_signature = {});
  void kill_all(int signal);
  void close_pipes(Worker& worker);

  boost::asio::io_context& io_;
  OrphanGuard& guard_;
  GroupCallbacks callbacks_;
  boost::asio::signal_set child_exits_;
  std::vector<std::shared_ptr<Worker>> workers_;
  NodeAssignment assignment_;
  // What decides a worker's routing besides --ranks-filter (kept for show_ranks).
  struct RoutingSpec {
    std::string redirects, tee;
    bool log_files = false;
    std::vector<int> local_ranks_filter;
  } routing_spec_;
  std::set<int> followed_;  // global ranks someone follows with `ddplaunch tail`
  bool stopping_ = false;
  bool closed_ = false;
  bool outcome_delivered_ = true;
  boost::asio::steady_timer init_grace_, kill_timer_, drain_timer_, sweep_timer_;
  RankLinePrinter printer_;  // the ranks' lines on the terminal
};

}  // namespace ddplaunch
