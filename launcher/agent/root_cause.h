// The one paragraph a person reads when a job fails: which rank failed first, where,
// in which phase, how it ended, and its last output lines.
#pragma once

#include <string>

#include "agent/launcher_messages.h"

namespace ddplaunch {

std::string describe_failure_line(const messages::FailureReport& report);  // one line

std::string describe_root_cause(const messages::FailureReport& first, int other_failures, long generation,
                                int restarts_used, int max_restarts);

int failure_exit_code(const WorkerFailure& failure);  // shell code; 1 when it did not exit

}  // namespace ddplaunch
