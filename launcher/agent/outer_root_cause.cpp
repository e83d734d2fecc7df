// OuterRootCause: see outer_root_cause.h.
#include "agent/outer_root_cause.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "policy/root_cause.h"
#include "supervise/outer_error_file.h"

namespace ddplaunch {

OuterRootCause::OuterRootCause(const std::map<std::string, std::string>& base_env, std::string hostname)
    : hostname_(std::move(hostname)) {
  if (auto outer = base_env.find("TORCHELASTIC_ERROR_FILE"); outer != base_env.end()) path_ = outer->second;
}

void OuterRootCause::on_failure(const WorkerFailure& failure, Generation generation) {
  if (failure_generation_ == generation) return;
  failure_ = failure;
  failure_generation_ = generation;
}

void OuterRootCause::write(int exit_code, Generation generation,
                           const std::function<std::string(int global_rank)>& child_error_file) const {
  if (path_.empty()) return;
  OuterFailure f;
  f.exit_code = exit_code;
  if (failure_ && failure_generation_ == generation) {
    f.message = describe_failure_line(FailureReport{*failure_, hostname_});
    for (const auto& line : failure_->tail) f.details += line + "\n";
    f.child_error_file = child_error_file(failure_->global_rank);
  } else {
    f.message = !stop_reason_.empty()
                    ? stop_reason_
                    : fmt::format("ddplaunch: the job failed on {} with exit code {}", hostname_, exit_code);
  }
  if (std::string error = write_outer_error_file(path_, f); !error.empty())
    spdlog::warn("could not write the root cause to TORCHELASTIC_ERROR_FILE: {}", error);
}

}  // namespace ddplaunch
