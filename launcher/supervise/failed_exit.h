// How a worker's unsuccessful exit is named (DESIGN.md "Phases of a worker"): init errors in
// its output (a lazily created NCCL communicator failing while "running") make it an init
// failure; otherwise the phase the shim last reported: setup (no init report: the program's
// own failure), init, or running. The policy decides which budget that spends.
#pragma once

#include <optional>
#include <string>

#include "policy/failure.h"
#include "policy/rank_phase.h"
#include "supervise/worker.h"

namespace ddplaunch {

struct FailedExit {
  FailurePhase phase = FailurePhase::Runtime;
  FailureKind kind = FailureKind::Exited;
  std::string detail;          // the root cause as far as known ("" when nothing says more)
  std::string init_signature;  // the known init error its output matched ("" when none)
};

// `phase_at_exit`: the worker's phase when it exited; `recorded_error`: the exception a rank
// that used torch's @record left in its error file (the root cause), when there is one.
FailedExit classify_failed_exit(const Worker& worker, RankPhase phase_at_exit,
                                const std::optional<std::string>& recorded_error);

}  // namespace ddplaunch
