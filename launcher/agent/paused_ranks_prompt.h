// PausedRanksPrompt: ranks started stopped for a debugger (--pause-ranks). For each, where to
// attach gdb from here or from any terminal; then this node's terminal is read once, and a
// line (Enter) resumes every paused rank.
#pragma once

#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "agent/node_plan.h"
#include "supervise/worker.h"

namespace ddplaunch {

class PausedRanksPrompt {
 public:
  PausedRanksPrompt(boost::asio::io_context& io, const NodePlan& plan, std::function<void()> on_enter);

  // `job_master`: HOST:PORT of the job's rendezvous, for `ddplaunch debug` elsewhere.
  void on_paused(const Worker& worker, const std::string& job_master);
  void close();  // the node is finishing: the terminal is no longer read

 private:
  void wait_for_enter();

  const NodePlan& plan_;
  std::function<void()> on_enter_;
  boost::asio::posix::stream_descriptor terminal_;  // stdin, duplicated: only while paused ranks exist
  char buffer_[256];
};

}  // namespace ddplaunch
