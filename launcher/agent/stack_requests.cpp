// StackRequests: one stack collection on a thread at a time; its result answers every
// request that came while it ran.
#include "agent/stack_requests.h"

#include <boost/asio/post.hpp>

#include "wire/launcher_messages.h"
#include "supervise/group_supervisor.h"

namespace ddplaunch {

StackRequests::StackRequests(boost::asio::io_context& io, std::string hostname, const NodeView& node,
                             MasterLink& master)
    : io_(io), hostname_(std::move(hostname)), node_(node), master_(master) {}

StackRequests::~StackRequests() {
  if (thread_.joinable()) thread_.join();
}

void StackRequests::on_request(long request, const std::string& stack_dir) {
  requests_.push_back(request);
  if (requests_.size() > 1 || !master_.connected()) return;  // the running collection will answer it
  if (thread_.joinable()) thread_.join();  // the previous one has finished (it posted)
  // A rank a person holds in its debugger is never interrupted: it is where its debugger says.
  // When only a child of it is (a DataLoader worker's breakpoint), the rank itself is read.
  const int node_rank = node_.node_rank();
  std::vector<StackTarget> targets;
  std::vector<RankStack> held;
  for (const auto& w : node_.workers()) {
    const pid_t pid = w->process.pid();
    if (pid <= 0 || w->process.status()) continue;
    const bool held_itself = (w->debugger.debugging() && w->debugger.pid() == pid) || w->debugger.gdb_attached();
    if (held_itself) held.push_back(RankStack{w->global_rank, node_rank, hostname_, pid, "debugger",
                                               "in its debugger, held by a person at the debug console"});
    else if (traced_by_a_person(pid))
      held.push_back(RankStack{w->global_rank, node_rank, hostname_, pid, "debugger",
                               "traced by a debugger (gdb -p?): held by a person, not interrupted"});
    else targets.push_back(StackTarget{w->global_rank, pid});
  }
  thread_ = std::thread([this, targets, held, dir = stack_dir] {
    auto stacks = collect_stacks(targets, dir);
    stacks.insert(stacks.end(), held.begin(), held.end());
    boost::asio::post(io_, [this, stacks = std::move(stacks)]() mutable { on_collected(std::move(stacks)); });
  });
}

void StackRequests::on_collected(std::vector<RankStack> stacks) {
  const int node_rank = node_.node_rank();
  for (auto& s : stacks) {
    s.node = node_rank;
    s.host = hostname_;
  }
  std::vector<long> requests = std::move(requests_);
  requests_.clear();
  if (!master_.connected() || node_.state() == NodeState::Finished) return;
  for (long request : requests)
    master_.send(messages::encode(master_.generation(), messages::RankStacksReply{request, hostname_, stacks}));
}

}  // namespace ddplaunch
