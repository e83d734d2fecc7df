// The subcommands that look at a job from any terminal, by asking its master (found by the
// node's job record, --master, or etcd): status (a table, --watch, --json), stacks, timeline
// (or a finished job's, from its --log-dir), tail (one rank's output as it comes) and the
// debug console. Each returns the process's exit status.
#pragma once

#include <string>
#include <vector>

#include "config/launch_config.h"

namespace ddplaunch {

// Of `candidates` (this user's recorded tokens of the job), the first the master at
// config.master accepts; "" when it accepts none, or there is none (each try is one short query).
std::string token_the_master_accepts(const LaunchConfig& config, const std::vector<std::string>& candidates);

int print_status(const LaunchConfig& config, bool watch, bool json);
int print_stacks(const LaunchConfig& config);
int write_job_timeline(const LaunchConfig& config, bool from_log_dir);
int follow_rank_output(const LaunchConfig& config, int rank);
int open_debug_console(const LaunchConfig& config, int gdb_rank);

}  // namespace ddplaunch
