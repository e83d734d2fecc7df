// NodeAgent: the master asked for stacks. The collection blocks (signals, files,
// eu-stack), so it runs on a thread; its result comes back to the loop and answers every
// request received while it ran (one collection serves them all).
#include <boost/asio/post.hpp>

#include "agent/launcher_messages.h"
#include "agent/node_agent.h"
#include "agent/stack_collection.h"

namespace ddplaunch {

void NodeAgent::on_collect_stacks(long request) {
  stack_requests_.push_back(request);
  if (stack_requests_.size() > 1 || !client_) return;  // the running collection will answer it
  if (stacks_thread_.joinable()) stacks_thread_.join();  // the previous one has finished (it posted)
  // A rank a person holds in its debugger is never interrupted: it is where its debugger says.
  std::vector<StackTarget> targets;
  std::vector<RankStack> held;
  for (const auto& w : supervisor_.workers()) {
    if (w->pid <= 0 || w->status) continue;
    if (w->debugging || w->gdb_attached) held.push_back(RankStack{w->global_rank, node_rank_, plan_.hostname, w->pid, "debugger",
                                               "in its debugger, held by a person at the debug console"});
    else if (traced_by_a_person(w->pid))
      held.push_back(RankStack{w->global_rank, node_rank_, plan_.hostname, w->pid, "debugger",
                               "traced by a debugger (gdb -p?): held by a person, not interrupted"});
    else targets.push_back(StackTarget{w->global_rank, w->pid});
  }
  stacks_thread_ = std::thread([this, targets, held, dir = status_.directory()] {
    auto stacks = collect_stacks(targets, dir);
    stacks.insert(stacks.end(), held.begin(), held.end());
    boost::asio::post(io_, [this, stacks = std::move(stacks)]() mutable { on_stacks_collected(std::move(stacks)); });
  });
}

void NodeAgent::on_stacks_collected(std::vector<RankStack> stacks) {
  for (auto& s : stacks) {
    s.node = node_rank_;
    s.host = plan_.hostname;
  }
  std::vector<long> requests = std::move(stack_requests_);
  stack_requests_.clear();
  if (!client_ || policy_.state() == NodeState::Finished) return;
  for (long request : requests)
    client_->send(messages::encode(policy_.generation(), messages::RankStacksReply{request, plan_.hostname, stacks}));
}

}  // namespace ddplaunch
