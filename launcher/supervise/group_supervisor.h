// GroupSupervisor: the process set of one node (ninja's SubprocessSet habit). It starts
// this node's workers for one generation and owns every wait on them — SIGCHLD, output,
// shim reports, stop grace — inside the one Asio event loop, and hands back one outcome
// per generation. It reports what happened; deciding what to do is the JobPolicy's job.
// Its parts: WorkerOutputRouter (the pipes), DebuggerWatch (a worker's debugger), RankPromptWatch (its own prompt),
// ShimReports (phases and progress), WorkerSignals (stop, resume, forward), LeftoverSweep.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "ddplaunch/contract.h"
#include "status/status_channel.h"
#include "supervise/debugger_watch.h"
#include "supervise/group_spec.h"
#include "supervise/leftover_sweep.h"
#include "supervise/orphan_guard.h"
#include "supervise/progress_record.h"
#include "supervise/shim_reports.h"
#include "supervise/worker.h"
#include "supervise/worker_output_router.h"
#include "supervise/worker_signals.h"

namespace ddplaunch {

class GroupSupervisor {
 public:
  // Reads the shims' reports from `status` (opened and closed by its owner), and drains it
  // itself before a failed worker's exit is classified.
  GroupSupervisor(boost::asio::io_context& io, OrphanGuard& guard, StatusChannel& status, GroupCallbacks callbacks);
  ~GroupSupervisor();

  // Spawns every local worker. A worker that cannot be started is reported through
  // on_failure (kind SpawnFailed, or SpawnNoResources when the node ran out of processes,
  // memory or descriptors) and the rest are stopped. Once every worker of the generation
  // is reaped, what they started is swept (descendant_sweep.h).
  void start(const GroupSpec& spec);
  // SIGTERM every worker's process group, SIGKILL after `grace`; a second call with 0 kills
  // at once. Does nothing when no worker is active.
  void stop(std::chrono::milliseconds grace);
  void handle_status(const contract::StatusMessage& message) { reports_.handle(message); }
  void resume_paused() { signals_.resume_paused(); }  // SIGCONT to workers started with --pause-ranks
  // A line typed for a rank: its debugger's when it is stopped in one (a line that resumes or
  // quits the debugger ends its debugging state), else the answer to its own prompt. False
  // when that rank is not this node's, or its keyboard is full or closed.
  bool debugger_input(int global_rank, const std::string& line);
  // A person's gdb took `worker` (`:attach R --gdb`) or let it go: the rank is "debugging"
  // meanwhile. Nothing for a worker of an earlier generation.
  void set_gdb_attached(const Worker& worker, bool attached);
  // Slurm's checkpoint-before-preemption signals (SIGUSR1/SIGUSR2): to every running
  // worker's own process (not its group: a data-loader child that does not handle them
  // would die). Returns how many workers were signalled.
  int forward_signal(int signal) { return signals_.forward(signal); }
  void close();              // kill what is left and stop waiting (the node is finishing)

  bool active() const;       // some worker not yet finished
  // The TORCHELASTIC_ERROR_FILE a rank of the current generation was given ("" when none).
  std::string error_file_of(int global_rank) const;
  const WorkerList& workers() const { return workers_; }
  // The console's `:ranks`: the terminal shows only these global ranks' lines from now on
  // (empty: every rank); log files and failure reports are unaffected, a rank in its debugger
  // is still shown at the console.
  void show_ranks(const std::vector<int>& ranks_filter);
  // `ddplaunch tail`: these global ranks' lines also go to on_followed_line.
  void follow_ranks(std::set<int> ranks) { output_.follow_ranks(std::move(ranks)); }

 private:
  void create_workers(const GroupSpec& spec);
  std::shared_ptr<Worker> worker_of(int global_rank) const;  // null when not this node's
  bool spawn_workers(const GroupSpec& spec);  // false when one could not be started
  void wait_for_child_exits();
  void reap_exited_children();
  void reap(Worker& worker, int wait_status);
  void on_worker_finished(Worker& worker);
  void deliver_outcome_if_done();
  void report_failure(Worker& worker, FailurePhase phase, FailureKind kind, std::string detail,
                      std::string init_signature = {});

  boost::asio::io_context& io_;
  OrphanGuard& guard_;
  StatusChannel& status_;
  GroupCallbacks callbacks_;
  boost::asio::signal_set child_exits_;
  WorkerList workers_;
  NodeAssignment assignment_;
  bool closed_ = false;
  bool outcome_delivered_ = true;
  boost::asio::steady_timer drain_timer_;  // a reaped worker's output: read for a bounded time
  DebuggerWatch debuggers_;
  RankPromptWatch prompts_;  // a rank's own input() or getpass, answered at the console
  WorkerOutputRouter output_;
  ShimReports reports_;
  WorkerSignals signals_;
  LeftoverSweep leftovers_;
};

}  // namespace ddplaunch
