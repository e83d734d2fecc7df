// Output you can steer: the console's `:ranks` (which ranks the terminals show) and `ddplaunch
// tail --rank R` (a followed rank's lines, batched): records and their codec.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch::messages {

struct OutputFilter { std::vector<int> ranks; };  // empty: every rank
struct FollowRank { int rank = -1; int seconds = 0; };
// lines: whole lines, each ended by '\n'; dropped: lines the node could not send meanwhile.
struct RankOutput { int rank = -1; std::string lines; long dropped = 0; };
inline constexpr std::size_t kMaxRankOutputBytes = 48 * 1024;  // one batch of a followed rank's lines
rendezvous::Message encode(Generation generation, const OutputFilter& payload);
rendezvous::Message encode(Generation generation, const FollowRank& payload);
rendezvous::Message encode(Generation generation, const RankOutput& payload);
std::optional<OutputFilter> decode_output_filter(const rendezvous::Message& message);
std::optional<FollowRank> decode_follow_rank(const rendezvous::Message& message);
std::optional<RankOutput> decode_rank_output(const rendezvous::Message& message);

}  // namespace ddplaunch::messages
