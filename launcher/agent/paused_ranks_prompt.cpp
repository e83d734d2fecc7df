// PausedRanksPrompt: how to attach to a paused rank, and Enter to resume them all.
#include "agent/paused_ranks_prompt.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

namespace ddplaunch {

PausedRanksPrompt::PausedRanksPrompt(boost::asio::io_context& io, const NodePlan& plan, NodeEvents& events)
    : plan_(plan), events_(events), terminal_(io) {}

void PausedRanksPrompt::on_paused(const Worker& w, const std::string& job_master) {
  spdlog::warn("rank {} is paused: from any terminal, `ddplaunch debug --job {} --master {} --gdb {}` attaches gdb to it "
               "through the job's debug console (with the job's token)",
               w.global_rank, plan_.config.job_id, job_master, w.global_rank);
  spdlog::warn(
      "rank {} is paused before its first instruction on {} (pid {}). Attach with:  gdb -p {}"
      "   — then continue it; send SIGCONT to ddplaunch (kill -CONT {}) to resume every paused rank, or press Enter "
      "here",
      w.global_rank, plan_.hostname, w.process.pid(), w.process.pid(), getpid());
  wait_for_enter();
}

// Reads the terminal once (only when paused ranks exist): a line resumes them all.
void PausedRanksPrompt::wait_for_enter() {
  if (terminal_.is_open() || !isatty(STDIN_FILENO)) return;
  int fd = dup(STDIN_FILENO);
  if (fd < 0) return;
  terminal_.assign(fd);
  terminal_.async_read_some(boost::asio::buffer(buffer_), [this](const boost::system::error_code& ec, std::size_t) {
    boost::system::error_code ignored;
    terminal_.close(ignored);
    if (!ec) events_.publish(node_event::ResumeAsked{});
  });
}

void PausedRanksPrompt::close() {
  boost::system::error_code ignored;
  terminal_.close(ignored);
}

}  // namespace ddplaunch
