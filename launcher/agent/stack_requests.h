// StackRequests: the master's requests for this node's ranks' stacks. The collection blocks
// (signals, files, eu-stack), so it runs on a thread of its own; its result comes back to
// the loop and answers every request received while it ran (one collection serves them all).
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "agent/master_link.h"
#include "agent/node_view.h"
#include "agent/stack_collection.h"
#include "ddplaunch/rendezvous/generation.h"
#include "ddplaunch/rendezvous/types.h"
#include "supervise/worker.h"

namespace ddplaunch {

class StackRequests {
 public:
  // Reads the ranks of `node`; answers through `master`.
  StackRequests(boost::asio::io_context& io, std::string hostname, const NodeView& node, MasterLink& master);
  ~StackRequests();  // joins the collection: bounded, every tool has a deadline

  // `stack_dir`: where the workers' shims write their faulthandler files.
  void on_request(long request, const std::string& stack_dir);

 private:
  void on_collected(std::vector<RankStack> stacks);

  boost::asio::io_context& io_;
  std::string hostname_;
  const NodeView& node_;
  MasterLink& master_;
  std::thread thread_;           // one stack collection at a time
  std::vector<long> requests_;   // answered by the running one
};

}  // namespace ddplaunch
