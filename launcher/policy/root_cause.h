// The one paragraph a person reads when a job fails: which rank failed first, where,
// in which phase, how it ended, and its last output lines.
#pragma once

#include <string>

#include "ddplaunch/rendezvous/generation.h"
#include "policy/failure.h"

namespace ddplaunch {

std::string describe_failure_line(const FailureReport& report);  // one line

// budget: "2 of 5 (automatic init restarts 2 of 3, --max-restarts 0 of 2)".
std::string describe_root_cause(const FailureReport& first, int other_failures, Generation generation,
                                const std::string& budget);

int failure_exit_code(const WorkerFailure& failure);  // shell code; 1 when it did not exit

}  // namespace ddplaunch
