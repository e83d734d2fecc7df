// One log format for the launcher (spdlog, to stderr): time, node, level, message.
#pragma once

#include "policy/decisions.h"

namespace ddplaunch {

void init_logging();
void set_log_node(int node_rank, int node_count);  // once the rendezvous assigned a rank
void log_decision(const decision::Log& log);       // a policy's Log decision, at its severity

}  // namespace ddplaunch
