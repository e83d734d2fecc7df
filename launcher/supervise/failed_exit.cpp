// The phase, kind and detail of a worker's unsuccessful exit: one pure classification.
#include "supervise/failed_exit.h"

#include <fmt/format.h>

#include "supervise/init_signatures.h"

namespace ddplaunch {

FailedExit classify_failed_exit(const Worker& worker, RankPhase phase_at_exit,
                                const std::optional<std::string>& recorded_error) {
  const auto signature = match_init_signature(worker.output.tail());
  const std::string& init_failure_detail = worker.phases.init_failure_detail();
  const bool init_reported = !init_failure_detail.empty();
  FailedExit exit;
  exit.phase = signature || init_reported        ? FailurePhase::Init
               : phase_at_exit == RankPhase::Setup ? FailurePhase::Setup
               : phase_at_exit == RankPhase::Init  ? FailurePhase::Init
                                                   : FailurePhase::Runtime;
  exit.kind = init_reported ? FailureKind::InitFailed : FailureKind::Exited;
  exit.detail = recorded_error ? *recorded_error
                : init_reported ? init_failure_detail
                : signature ? fmt::format("output matches '{}'", signature->signature)
                : phase_at_exit == RankPhase::Setup ? std::string("exited in setup, before it called init_process_group")
                : phase_at_exit == RankPhase::Init  ? std::string("exited during process-group init")
                                                    : std::string();
  if (signature) exit.init_signature = signature->signature;
  return exit;
}

}  // namespace ddplaunch
