// Formatting of failure reports.
#include "agent/root_cause.h"

#include <fmt/format.h>

namespace ddplaunch {

namespace {
std::string how_it_ended(const WorkerFailure& f) {
  if (f.kind == "init_timeout") return "hung in init";
  if (f.kind == "spawn_failed") return "could not be started";
  if (f.kind == "init_failed") return "reported an init failure";
  return f.status ? f.status->describe() : std::string("failed");
}

std::string likely_cause(const WorkerFailure& f) {
  if (f.kind == "spawn_failed") return "the program path or permissions are wrong on that node";
  if (f.kind == "init_timeout")
    return "a peer never joined the process group (crashed, wrong MASTER_ADDR/port, firewall) — "
           "see the other ranks' output";
  if (f.phase == FailurePhase::Init)
    return "process-group (NCCL/gloo) initialisation failed — check NCCL_SOCKET_IFNAME, the GPU driver, and "
           "that every node reaches MASTER_ADDR:MASTER_PORT";
  return "the training program failed after initialisation — read its output below";
}
}  // namespace

int failure_exit_code(const WorkerFailure& f) {
  if (f.status && !f.status->success()) return f.status->shell_code();
  return 1;
}

std::string describe_failure_line(const messages::FailureReport& r) {
  const WorkerFailure& f = r.failure;
  return fmt::format("rank {} on node {} ({}) pid {}: {} during {}{}", f.global_rank, f.node_rank, r.host, f.pid,
                     how_it_ended(f), f.phase == FailurePhase::Init ? "init" : "runtime",
                     f.detail.empty() ? "" : ": " + f.detail);
}

std::string describe_root_cause(const messages::FailureReport& first, int other_failures, long generation,
                                int restarts_used, int max_restarts) {
  const WorkerFailure& f = first.failure;
  std::string s = fmt::format(
      "JOB FAILED — root cause: rank {} (local rank {}) on node {} ({}), pid {}, {} during {} in generation {}.\n",
      f.global_rank, f.local_rank, f.node_rank, first.host, f.pid, how_it_ended(f),
      f.phase == FailurePhase::Init ? "init" : "runtime", generation);
  if (!f.detail.empty()) s += fmt::format("  error: {}\n", f.detail);
  if (f.kind == "init_failed" && f.status) s += fmt::format("  then: {}\n", f.status->describe());
  s += fmt::format("  likely cause: {}\n", likely_cause(f));
  s += fmt::format("  restarts used: {} of {}; other failures: {}\n", restarts_used, max_restarts, other_failures);
  if (!f.tail.empty()) {
    s += fmt::format("  last {} output lines of rank {}:\n", f.tail.size(), f.global_rank);
    for (const auto& line : f.tail) s += "    | " + line + "\n";
  } else {
    s += fmt::format("  rank {} printed nothing.\n", f.global_rank);
  }
  return s;
}

}  // namespace ddplaunch
