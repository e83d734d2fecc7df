// Stacks on demand: the master asks every node for its ranks' stacks in one round, each node
// answers with them: records and their codec.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "policy/stack_report.h"

namespace ddplaunch::messages {

struct CollectStacks { long request = 0; };
struct RankStacksReply { long request = 0; std::string host; std::vector<RankStack> stacks; };
inline constexpr std::size_t kMaxStackBytes = 16 * 1024;  // one rank's frames on the wire
inline constexpr std::size_t kMaxStacksPerMessage = 1024;
rendezvous::Message encode(Generation generation, const CollectStacks& payload);
rendezvous::Message encode(Generation generation, const RankStacksReply& payload);
std::optional<CollectStacks> decode_collect_stacks(const rendezvous::Message& message);
std::optional<RankStacksReply> decode_rank_stacks(const rendezvous::Message& message);

}  // namespace ddplaunch::messages
