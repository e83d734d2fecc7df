// NodeAgent's end: once its NodePolicy decided the node ends, say the outcome, release every
// timer, socket, child and file (the master's server last: `ddplaunch tail` clients read the
// last lines), and leave the root cause where an outer agent looks for it (OuterRootCause).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/node_agent.h"
#include "job_record.h"
#include "output/terminal_writer.h"

namespace ddplaunch {

// The policy decided the node ends (it is Finished now): say so, release everything.
void NodeAgent::finish(int exit_code) {
  exit_code_ = exit_code;
  terminal_begin_last_lines();  // the verdict reaches the reader even when workers filled the terminal's queue
  if (!plan_.doctor) {
    std::string where = node_rank_ >= 0 ? fmt::format("node {} ({})", node_rank_, plan_.hostname) : plan_.hostname;
    if (exit_code == 0) spdlog::info("{}: job succeeded", where);
    else
      spdlog::error("{}: job failed, exit code {}{}", where, exit_code,
                    policy_.host_server() || (etcd_ && node_rank_ < 0) ? ""  // etcd: never joined a coordinator
                    : etcd_ ? " — the coordinator's output has the root cause"
                            : " — the master's output has the root cause");
  }
  if (exit_code != 0)
    outer_root_cause_.write(exit_code, policy_.generation(),
                            [this](int global_rank) { return supervisor_.error_file_of(global_rank); });
  boost::system::error_code ignored;
  signals_.cancel(ignored);
  exit_timer_.cancel();
  rank_states_.stop();
  hosting_retry_timer_.cancel();
  join_watch_.close();
  paused_prompt_.close();
  host_.close_console();
  debug_sessions_.close();
  if (!job_record_.empty()) remove_job_record(job_record_);
  peer_probe_.close();
  follower_.close();
  supervisor_.close();
  status_.close();
  host_.close_coordinator();
  if (client_) client_->close();
  host_.close_server();
  if (etcd_) etcd_->close(host_.job_ended());
}

}  // namespace ddplaunch
