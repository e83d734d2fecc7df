// What went wrong with one worker, as plain values: the phase it was in, the kind of
// failure, how it ended and its last words. Written by the supervisor, carried to the
// master in one message, judged by the JobPolicy and printed by root_cause.
#pragma once

#include <sys/types.h>

#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "ddplaunch/base/exit_status.h"
#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch {

// Where the rank was when it failed (DESIGN.md "Phases of a worker"). Only a failure in
// init (after a shim reported init began, or with an init signature in its output) is an
// init failure with its automatic budget; a rank that fails in setup (before any init
// report: an ImportError, a typo, a bad argument) failed in the program, and like a
// failure while running it restarts only with --max-restarts.
enum class FailurePhase { Setup, Init, Runtime };

enum class FailureKind {
  Exited,        // the process ended unsuccessfully
  InitFailed,    // a shim reported init_failed
  InitTimeout,   // the group's init deadline passed with this rank still in init
  SetupTimeout,  // setup_timeout_s passed with this rank still in setup (only when the user set one)
  SpawnFailed,   // the program could not be started (never restarted)
  SpawnNoResources,  // starting it failed for lack of processes, memory or descriptors (transient: restarted)
  Hang,          // running, but no progress past the hang deadline; hang.action decides
  DebuggerQuit,  // a person quit the rank's debugger at the debug console: the job ends (never restarted)
};

std::string_view failure_kind_name(FailureKind kind);                 // "init_timeout"
std::optional<FailureKind> failure_kind_from_name(std::string_view name);
std::string_view failure_phase_name(FailurePhase phase);              // "setup" / "init" / "runtime"
std::optional<FailurePhase> failure_phase_from_name(std::string_view name);

struct WorkerFailure {
  int node_rank = 0;
  int global_rank = 0;
  int local_rank = 0;
  pid_t pid = 0;
  FailurePhase phase = FailurePhase::Init;
  FailureKind kind = FailureKind::Exited;
  std::optional<ExitStatus> status;
  std::string detail;            // shim's error text, signature match, deadline and its source
  std::string init_signature;    // the NCCL/c10d/gloo init error its output matched ("" when none)
  std::deque<std::string> tail;  // last output lines
  std::string log_file;          // its whole output on its node (--log-dir), "" without one
};

struct FailureReport {
  WorkerFailure failure;
  std::string host;
};

// The failure that caused the last restart (JobPolicy): the same one again is deterministic.
struct RememberedFailure {
  Generation generation;
  int rank = 0;
  FailurePhase phase = FailurePhase::Init;
  std::string error;
};

}  // namespace ddplaunch
