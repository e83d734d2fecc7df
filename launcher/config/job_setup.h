// Resolves the final LaunchConfig for this node: defaults → YAML → command line (with
// torchrun's PET_* fallbacks, so a Kubeflow PyTorchJob works) → DDPLAUNCH_TOKEN → Slurm
// hints for what the command line left unset; then the program command (python or not).
// Conflicts between explicit flags and the cluster are reported.
#pragma once

#include <string>
#include <vector>

#include "config/command_line.h"
#include "config/launch_config.h"
#include "env/worker_environment.h"

namespace ddplaunch {

struct JobSetup {
  LaunchConfig config;
  std::vector<std::string> notes;   // tell the user once (info)
  std::vector<std::string> warnings;  // tell the user once (warning): the job still runs
  std::vector<std::string> errors;  // stop: each names the key/variable and the fix
};

JobSetup resolve_job_setup(const CommandLine& command_line, const Environment& env);

// Default job id when none is given: the same on every node of one job.
std::string default_job_id(const LaunchConfig& config);

}  // namespace ddplaunch
