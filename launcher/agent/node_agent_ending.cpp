// NodeAgent's end: once its NodePolicy decided the node ends, say the outcome, release every
// timer, socket, child and file, let `ddplaunch tail` clients read the last lines, and leave
// the root cause where an outer agent looks for it.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/node_agent.h"
#include "job_record.h"
#include "policy/root_cause.h"
#include "supervise/outer_error_file.h"

namespace ddplaunch {

// The policy decided the node ends (it is Finished now): say so, release everything.
void NodeAgent::finish(int exit_code) {
  exit_code_ = exit_code;
  if (!plan_.doctor) {
    std::string where = node_rank_ >= 0 ? fmt::format("node {} ({})", node_rank_, plan_.hostname) : plan_.hostname;
    if (exit_code == 0) spdlog::info("{}: job succeeded", where);
    else
      spdlog::error("{}: job failed, exit code {}{}", where, exit_code,
                    policy_.host_server() || (etcd_ && node_rank_ < 0) ? ""  // etcd: never joined a coordinator
                    : etcd_ ? " — the coordinator's output has the root cause"
                            : " — the master's output has the root cause");
  }
  if (exit_code != 0) write_outer_error_file(exit_code);
  boost::system::error_code ignored;
  signals_.cancel(ignored);
  exit_timer_.cancel();
  rank_states_.stop();
  join_timer_.cancel();
  paused_prompt_.close();
  if (debug_relay_) debug_relay_->close();
  debug_sessions_.close();
  if (!job_record_.empty()) remove_job_record(job_record_);
  peer_probe_.close();
  follower_.close();
  supervisor_.close();
  status_.close();
  if (coordinator_) coordinator_->close();
  if (client_) client_->close();
  if (server_ && coordinator_ && coordinator_->queries().tails_unread()) close_server_after_tails();
  else if (server_) server_->close();  // flushes job_end to the other nodes, bounded
  if (etcd_) etcd_->close(coordinator_ && coordinator_->job_ended());
}

// `ddplaunch tail` clients still have a followed rank's last lines to read: the master's
// rendezvous answers their polls a little longer (at most kTailLinger; job_end has gone out).
void NodeAgent::close_server_after_tails(int checks_left) {
  if (checks_left <= 0 || !coordinator_->queries().tails_unread()) return server_->close();
  tail_linger_timer_.expires_after(kTailLinger / kTailLingerChecks);
  tail_linger_timer_.async_wait([this, checks_left](const boost::system::error_code&) {
    close_server_after_tails(checks_left - 1);
  });
}

// An outer agent (TorchX, Kubeflow, a scheduler) reads the root cause from the
// TORCHELASTIC_ERROR_FILE it gave this launcher, as torchrun's @record main writes it.
void NodeAgent::write_outer_error_file(int exit_code) {
  auto outer = plan_.base_env.find("TORCHELASTIC_ERROR_FILE");
  if (outer == plan_.base_env.end() || outer->second.empty()) return;
  OuterFailure f;
  f.exit_code = exit_code;
  if (local_failure_ && local_failure_generation_ == policy_.generation()) {
    f.message = describe_failure_line(FailureReport{*local_failure_, plan_.hostname});
    for (const auto& line : local_failure_->tail) f.details += line + "\n";
    f.child_error_file = supervisor_.error_file_of(local_failure_->global_rank);
  } else {
    f.message = !stop_reason_.empty() ? stop_reason_
                                      : fmt::format("ddplaunch: the job failed on {} with exit code {}", plan_.hostname,
                                                    exit_code);
  }
  if (std::string error = ::ddplaunch::write_outer_error_file(outer->second, f); !error.empty())
    spdlog::warn("could not write the root cause to TORCHELASTIC_ERROR_FILE: {}", error);
}

}  // namespace ddplaunch
