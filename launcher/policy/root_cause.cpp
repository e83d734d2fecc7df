// Formatting of failure reports.
#include "policy/root_cause.h"

#include <fmt/format.h>

#include "ddplaunch/rendezvous/generation_format.h"
#include "policy/program_error.h"

namespace ddplaunch {

namespace {
std::string how_it_ended(const WorkerFailure& f) {
  switch (f.kind) {
    case FailureKind::InitTimeout: return "passed the group's init deadline";
    case FailureKind::SetupTimeout: return "passed the setup time limit";
    case FailureKind::SpawnFailed: return "could not be started";
    case FailureKind::SpawnNoResources: return "could not be started: the node ran out of resources";
    case FailureKind::InitFailed: return "reported an init failure";
    case FailureKind::Hang: return "made no progress past the hang deadline";
    case FailureKind::DebuggerQuit: return "quit its debugger (`q` at the console)";
    case FailureKind::Exited: break;
  }
  return f.status ? f.status->describe() : std::string("failed");
}

std::string likely_cause(const WorkerFailure& f) {
  switch (f.kind) {
    case FailureKind::SpawnFailed: return "the program path or permissions are wrong on that node";
    case FailureKind::SpawnNoResources:
      return "that node is out of processes, memory or file descriptors (other jobs, a leak, or low limits): "
             "check `ulimit -u` / `ulimit -n` and free memory there; ddplaunch raises its soft descriptor limit to "
             "the hard one, so raise the hard limit (limits.conf, the scheduler's) if descriptors ran out; "
             "a restart is tried within restart.init_restarts";
    case FailureKind::InitTimeout:
      return "a peer never completed the process group's set-up (crashed, wrong MASTER_ADDR/port, firewall, wrong "
             "NCCL_SOCKET_IFNAME) — see the other ranks' output";
    case FailureKind::Hang:
      return "the rank is stuck: in a collective waiting for a peer that stopped (see which rank is stuck where in "
             "the stacks), a deadlock, a dead data-loader worker or I/O that never returns; if the step is just "
             "slow, raise hang.hang_minimum_s (--hang-minimum) or hang.hang_factor";
    case FailureKind::DebuggerQuit:
      return "a person ended the job on purpose (the quit was confirmed at the debug console): nothing failed, "
             "nothing was restarted";
    case FailureKind::SetupTimeout:
      return "the program did not reach init_process_group in time (slow data loading, a stuck import, or a "
             "setup_timeout_s shorter than its start-up)";
    default: break;
  }
  const auto exception = python_exception(f);
  const std::string raised = exception ? fmt::format(" (it raised {})", exception->type) : std::string();
  if (f.phase == FailurePhase::Setup)
    return "the program failed in its own code before it called init_process_group" + raised +
           " — not a network, NCCL or launcher problem: fix the error shown above (its output is below); a "
           "program's own error is not retried unless you ask with --max-restarts";
  if (f.phase == FailurePhase::Init && !is_init_failure(f))
    return "the program's own error inside process-group init" + raised +
           " (a wrong backend, init_method or argument, a missing file): deterministic, not a network problem — "
           "fix the call shown in the traceback below";
  if (f.phase == FailurePhase::Init)
    return "the process group's initialisation failed (NCCL/gloo/c10d) — check NCCL_SOCKET_IFNAME, the GPU "
           "driver, that every node reaches MASTER_ADDR:MASTER_PORT, and the output below";
  if (exception) return "the training program raised " + exception->type + " after initialisation — read its traceback below";
  return "the training program failed after initialisation — read its output below";
}

std::string pid_text(const WorkerFailure& f) { return f.pid > 0 ? fmt::format(" pid {}", f.pid) : std::string(); }
}  // namespace

int failure_exit_code(const WorkerFailure& f) {
  if (f.status && !f.status->success()) return f.status->shell_code();
  return 1;
}

std::string describe_failure_line(const FailureReport& r) {
  const WorkerFailure& f = r.failure;
  // A hang's detail carries every rank's stacks: one line here, the whole in the root cause.
  const std::string detail = f.kind == FailureKind::Hang ? f.detail.substr(0, f.detail.find('\n')) : f.detail;
  return fmt::format("rank {} on node {} ({}){}: {} during {}{}", f.global_rank, f.node_rank, r.host, pid_text(f),
                     how_it_ended(f), failure_phase_name(f.phase), detail.empty() ? "" : ": " + detail);
}

std::string describe_root_cause(const FailureReport& first, int other_failures, Generation generation,
                                const std::string& budget) {
  const WorkerFailure& f = first.failure;
  // The program's own error is the headline (the exception a Python rank raised); the
  // detail follows when it says more than that line.
  const auto exception = python_exception(f);
  std::string s = fmt::format(
      "JOB FAILED — root cause: rank {} (local rank {}) on node {} ({}){}, {} during {} in generation {}{}.\n",
      f.global_rank, f.local_rank, f.node_rank, first.host, pid_text(f).empty() ? "" : "," + pid_text(f),
      how_it_ended(f), failure_phase_name(f.phase), generation, exception ? ": " + exception->line : std::string());
  if (!f.detail.empty() && !(exception && f.detail == exception->line)) s += fmt::format("  error: {}\n", f.detail);
  if (f.kind == FailureKind::InitFailed && f.status) s += fmt::format("  then: {}\n", f.status->describe());
  s += fmt::format("  likely cause: {}\n", likely_cause(f));
  s += fmt::format("  restarts used: {}; other failures: {}\n", budget, other_failures);
  if (!f.tail.empty()) {
    s += fmt::format("  last {} output lines of rank {}:\n", f.tail.size(), f.global_rank);
    for (const auto& line : f.tail) s += "    | " + line + "\n";
  } else if (f.kind != FailureKind::InitTimeout && f.kind != FailureKind::SetupTimeout && f.kind != FailureKind::Hang &&
             f.kind != FailureKind::DebuggerQuit) {
    s += fmt::format("  rank {} printed nothing.\n", f.global_rank);
  } else {
    s += fmt::format("  its output is above, prefixed with its rank.\n");
  }
  if (!f.log_file.empty()) s += fmt::format("  its whole output: {} on {}\n", f.log_file, first.host);
  return s;
}

}  // namespace ddplaunch
