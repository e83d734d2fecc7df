// The error file of an outer agent (TorchX, Kubeflow, a torchrun or scheduler above us): when
// the launcher itself was started with TORCHELASTIC_ERROR_FILE, a node that ends with a
// failure writes its root cause there, as torchrun's `@record`-wrapped main does — the failed
// rank's own error file with its exit code as "errorCode" when the rank wrote one, else a
// message of ours in the same JSON shape. Workers never get this path (they get their own).
#pragma once

#include <string>

namespace ddplaunch {

struct OuterFailure {
  std::string message;           // one line: "rank 1 on node 0 (host): exit code 1 during setup: ..."
  std::string details;           // more lines (the failed rank's last output), for extraInfo
  std::string child_error_file;  // the failed rank's TORCHELASTIC_ERROR_FILE ("" when none)
  int exit_code = 1;
};

// Writes the file (replacing an older one); "" on success, else why it could not.
std::string write_outer_error_file(const std::string& path, const OuterFailure& failure);

}  // namespace ddplaunch
