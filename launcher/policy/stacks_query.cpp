// decide_stacks_query: see stacks_query.h.
#include "policy/stacks_query.h"

#include <chrono>

namespace ddplaunch {

StacksQueryAnswer decide_stacks_query(const StacksQueryFacts& f) {
  using Kind = StacksQueryAnswer::Kind;
  if (f.multi_node && !f.has_token)
    return {Kind::Refuse, 0,
            "error: this multi-node job has no rendezvous token, so anyone who reaches its port could interrupt "
            "every rank: ddplaunch stacks is refused; start the job with DDPLAUNCH_TOKEN (or --token-file) set on "
            "every node, and ask with the same token"};
  if (f.in_flight) return {Kind::Join, *f.in_flight, {}};
  const double since_last = std::chrono::duration<double>(f.now - f.last_started).count();
  if (f.last_round && since_last < kMinStacksIntervalS) return {Kind::Join, *f.last_round, {}};
  return {Kind::Start, 0, {}};
}

}  // namespace ddplaunch
