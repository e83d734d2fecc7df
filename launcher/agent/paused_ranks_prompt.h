// PausedRanksPrompt: ranks started stopped for a debugger (--pause-ranks). For each, where to
// attach gdb from here or from any terminal; then this node's terminal is read once, and a
// line (Enter) resumes every paused rank.
#pragma once

#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "agent/node_event.h"
#include "agent/node_plan.h"
#include "supervise/worker.h"

namespace ddplaunch {

class PausedRanksPrompt {
 public:
  // Enter at the terminal is published to `events` (ResumeAsked).
  PausedRanksPrompt(boost::asio::io_context& io, const NodePlan& plan, NodeEvents& events);

  // `job_master`: HOST:PORT of the job's rendezvous, for `ddplaunch debug` elsewhere.
  void on_paused(const Worker& worker, const std::string& job_master);
  void close();  // the node is finishing: the terminal is no longer read

 private:
  void wait_for_enter();

  const NodePlan& plan_;
  NodeEvents& events_;
  boost::asio::posix::stream_descriptor terminal_;  // stdin, duplicated: only while paused ranks exist
  char buffer_[256];
};

}  // namespace ddplaunch
