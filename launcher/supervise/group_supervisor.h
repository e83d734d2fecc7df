// GroupSupervisor: starts this node's workers for one generation and owns every wait on
// them (exit, output, init deadline, stop grace) inside the one Asio event loop. It
// reports what happened; deciding what to do about it is the coordinator's job.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "ddplaunch/contract.h"
#include "env/worker_environment.h"
#include "supervise/orphan_guard.h"
#include "supervise/worker.h"

namespace ddplaunch {

struct GroupSpec {
  std::vector<std::string> program;
  NodeAssignment assignment;
  Environment base_env;          // launcher env + shim additions (LD_PRELOAD, PYTHONPATH)
  std::string hostname;
  std::string log_dir;           // "" = no log files
  std::vector<int> pause_ranks;  // global ranks started stopped
  double init_grace_s = 0;       // no-shim programs: initialised after this long (0: first output)
};

struct GroupOutcome {
  bool stopped_by_request = false;
  std::vector<std::pair<int, ExitStatus>> statuses;  // (global rank, status), by local rank
  bool all_succeeded() const;
};

struct GroupCallbacks {
  std::function<void(const WorkerFailure&)> on_failure;       // first failure of each worker
  std::function<void(const Worker&)> on_initialized;
  std::function<void(const Worker&)> on_paused;               // started stopped, waiting for a debugger
  std::function<void(const GroupOutcome&)> on_finished;       // every worker reaped and drained
  std::function<void()> drain_status;                         // read queued shim reports now
};

class GroupSupervisor {
 public:
  GroupSupervisor(boost::asio::io_context& io, OrphanGuard& guard, GroupCallbacks callbacks);
  ~GroupSupervisor();

  // Spawns every local worker. A worker that cannot be started is reported through
  // on_failure (kind "spawn_failed") and the rest are stopped.
  void start(const GroupSpec& spec);
  // SIGTERM every worker's process group, SIGKILL after `grace`. Idempotent.
  void stop(std::chrono::milliseconds grace);
  void handle_child_exit();  // call on SIGCHLD
  void handle_status(const contract::StatusMessage& message);
  void resume_paused();      // SIGCONT to workers started with --pause-ranks

  bool active() const;       // some worker not yet finished
  const std::vector<std::shared_ptr<Worker>>& workers() const { return workers_; }
  long generation() const { return generation_; }

 private:
  void read_output(Worker& worker, bool is_stdout);
  void on_line(Worker& worker, OutputStream stream, std::string_view line);
  void mark_initialized(Worker& worker);
  void reap(Worker& worker, int wait_status);
  void on_worker_finished(Worker& worker);
  void report_failure(Worker& worker, FailurePhase phase, std::string kind, std::string detail);
  void on_init_deadline();
  void kill_all(int signal);
  void close_pipes(Worker& worker);

  boost::asio::io_context& io_;
  OrphanGuard& guard_;
  GroupCallbacks callbacks_;
  std::vector<std::shared_ptr<Worker>> workers_;
  NodeAssignment assignment_;
  long generation_ = 0;
  double init_grace_s_ = 0;
  bool stopping_ = false;
  bool finished_reported_ = true;
  boost::asio::steady_timer init_deadline_, init_grace_, kill_timer_, drain_timer_;
};

}  // namespace ddplaunch
