// One log format for the launcher (spdlog, to stderr): time, node, level, message.
#pragma once

#include <string>
#include <vector>

#include "policy/decisions.h"

namespace ddplaunch {

void init_logging();

// Each error logged (one line each), then the exit status of a job refused before it started
// (kExitConfigError): bad flags, YAML, environment, a failed local check.
int log_errors_and_refuse(const std::vector<std::string>& errors);
void set_log_node(int node_rank, int node_count);  // once the rendezvous assigned a rank
void log_decision(const decision::Log& log);       // a policy's Log decision, at its severity

}  // namespace ddplaunch
