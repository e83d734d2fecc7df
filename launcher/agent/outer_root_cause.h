// What an outer agent (TorchX, Kubeflow, a scheduler) reads as this node's root cause, in the
// TORCHELASTIC_ERROR_FILE it gave this launcher (supervise/outer_error_file.h writes it as
// torchrun's @record main does): this node's first failed rank of the last generation, else
// why the master stopped the job, else the node's exit code.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "ddplaunch/rendezvous/generation.h"
#include "policy/failure.h"

namespace ddplaunch {

class OuterRootCause {
 public:
  // `base_env`: the launcher's own environment, where TORCHELASTIC_ERROR_FILE may be set.
  OuterRootCause(const std::map<std::string, std::string>& base_env, std::string hostname);

  // A rank failed in `generation`: the first failure of a generation is its root cause here.
  void on_failure(const WorkerFailure& failure, Generation generation);
  // The master stopped the job (while this node ran): why, for when no rank here failed.
  void on_stop_reason(std::string reason) { stop_reason_ = std::move(reason); }
  // The node ends with `exit_code` != 0 after `generation`: writes the file when the outer
  // agent gave one. `child_error_file`: a rank's own TORCHELASTIC_ERROR_FILE ("" when none).
  void write(int exit_code, Generation generation, const std::function<std::string(int global_rank)>& child_error_file) const;

 private:
  std::string path_;  // "" when no outer agent asked
  std::string hostname_;
  std::optional<WorkerFailure> failure_;
  std::optional<Generation> failure_generation_;
  std::string stop_reason_;
};

}  // namespace ddplaunch
