// Known output of a failed NCCL / c10d / gloo process-group initialisation. Used for
// programs that do not report through the shim: if their last lines match, the failure
// is an init failure (restartable), not a runtime one.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>

namespace ddplaunch {

struct InitSignatureMatch {
  std::string signature;  // what matched, e.g. "NCCL error: unhandled system error"
  std::string line;       // the output line it matched
};

std::optional<InitSignatureMatch> match_init_signature(std::string_view line);
std::optional<InitSignatureMatch> match_init_signature(const std::deque<std::string>& lines);

}  // namespace ddplaunch
