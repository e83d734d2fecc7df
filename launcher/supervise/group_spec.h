// What the supervision of one generation is given (GroupSpec: program, assignment, output
// routing), what it hands back (GroupOutcome) and whom it tells as things happen
// (GroupCallbacks). Shared by GroupSupervisor and the parts it owns.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ddplaunch/contract.h"
#include "ddplaunch/rendezvous/generation.h"
#include "debug/pdb_text.h"
#include "env/worker_environment.h"
#include "output/stream_routing.h"
#include "placement/cpu_placement.h"
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
  StreamSpec redirects, tee;     // torchrun's -r / -t (output/stream_routing.h)
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
  Generation generation;
  std::vector<std::pair<int, ExitStatus>> statuses;  // (global rank, status), by local rank
};

struct GroupCallbacks {
  std::function<void(const WorkerFailure&)> on_failure;   // first failure of each worker
  std::function<void()> on_phases_changed;              // a worker moved phase (shim report, exit)
  std::function<void(const Worker&)> on_paused;           // started stopped, waiting for a debugger
  std::function<void(const GroupOutcome&)> on_finished;   // once per started generation
  // Interactive debugging: a worker's debugger showed its first prompt (stopped at `where`;
  // `reason` "raised ValueError" for a --post-mortem stop, "" for a breakpoint),
  // wrote output (whole lines) and maybe prompted again, or let the worker run on / exited.
  std::function<void(const Worker&, const debug::StopLocation& where, const std::string& reason)> on_debugger_stopped;
  std::function<void(const Worker&, const std::string& lines, bool prompt)> on_debugger_output;
  std::function<void(const Worker&)> on_debugger_left;
  // The rank's own prompt (input(), getpass; `secret` for getpass) is waiting for a line, as
  // shown (its prefix and text); "" when it no longer waits (answered, or it wrote on past it).
  std::function<void(const Worker&, const std::string& shown, bool secret)> on_rank_prompt;
  // `ddplaunch tail`: a line of a followed rank (follow_ranks), as printed, without its newline.
  std::function<void(int global_rank, std::string_view line)> on_followed_line;

  void phases_changed() const {
    if (on_phases_changed) on_phases_changed();
  }
};

// The workers of the current generation, by local rank.
using WorkerList = std::vector<std::shared_ptr<Worker>>;

}  // namespace ddplaunch
