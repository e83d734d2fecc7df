// How the nodes of a job's first generation get their node ranks, with and without
// membership (the rendezvous server's fixed mode and the launcher's Membership): a rank a
// node asked for (--node-rank) is honoured, the first asker winning; every other node takes
// the lowest free rank, in join order. Pure, header-only: the policy library uses it without
// linking the server.
#pragma once

#include <cstddef>
#include <vector>

namespace ddplaunch::rendezvous {

// `requested`: one entry per node in join order, the rank it asked for or -1 (any); `slots`:
// how many ranks there are (at least one per node; a job started below its largest size has
// more slots than nodes, and its caller closes the gaps). A request at or beyond `slots` is
// treated as -1. Returns each node's rank in [0, slots), in the same order, each rank once.
inline std::vector<int> assign_node_ranks(const std::vector<int>& requested, std::size_t slots) {
  const std::size_t count = requested.size();
  std::vector<int> ranks(count, -1);
  std::vector<bool> taken(slots > count ? slots : count, false);
  for (std::size_t i = 0; i < count; ++i) {
    const int wish = requested[i];
    if (wish < 0 || static_cast<std::size_t>(wish) >= slots || taken[static_cast<std::size_t>(wish)]) continue;
    ranks[i] = wish;
    taken[static_cast<std::size_t>(wish)] = true;
  }
  std::size_t next_free = 0;
  for (auto& rank : ranks) {
    if (rank >= 0) continue;
    while (taken[next_free]) ++next_free;
    rank = static_cast<int>(next_free);
    taken[next_free] = true;
  }
  return ranks;
}

}  // namespace ddplaunch::rendezvous
