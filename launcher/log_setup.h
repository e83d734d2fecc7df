// One log format for the launcher (spdlog, to stderr): time, node, level, message.
#pragma once

namespace ddplaunch {

void init_logging();
void set_log_node(int node_rank, int node_count);  // once the rendezvous assigned a rank

}  // namespace ddplaunch
