// Codec of the output filter and the followed ranks' lines.
#include "wire/output_steering_messages.h"

#include "wire/message_bounds.h"
#include "wire/message_fields.h"
#include "ddplaunch/base/index_list.h"

namespace ddplaunch::messages {

namespace {
constexpr int kMaxListedRank = 1 << 22;  // far above any world size
}

rendezvous::Message encode(Generation generation, const OutputFilter& p) {
  return make(Kind::OutputFilter, generation, {{"ranks", format_index_list(p.ranks)}});
}
std::optional<OutputFilter> decode_output_filter(const rendezvous::Message& m) {
  if (!is(m, Kind::OutputFilter)) return std::nullopt;
  const std::string ranks = field(m, "ranks");
  if (ranks.empty()) return OutputFilter{};
  auto parsed = parse_index_list(ranks, kMaxListedRank);
  if (!parsed) return std::nullopt;
  return OutputFilter{std::move(*parsed)};
}

rendezvous::Message encode(Generation generation, const FollowRank& p) {
  return make(Kind::FollowRank, generation, {{"rank", std::to_string(p.rank)}, {"seconds", std::to_string(p.seconds)}});
}
std::optional<FollowRank> decode_follow_rank(const rendezvous::Message& m) {
  if (!is(m, Kind::FollowRank)) return std::nullopt;
  FollowRank p{int_field(m, "rank", -1), int_field(m, "seconds", -1)};
  if (p.rank < 0 || p.seconds < 0 || p.seconds > 3600) return std::nullopt;
  return p;
}

rendezvous::Message encode(Generation generation, const RankOutput& p) {
  return make(Kind::RankOutput, generation,
              {{"rank", std::to_string(p.rank)}, {"lines", cut_middle(p.lines, kMaxRankOutputBytes)},
               {"dropped", std::to_string(p.dropped)}});
}
std::optional<RankOutput> decode_rank_output(const rendezvous::Message& m) {
  if (!is(m, Kind::RankOutput)) return std::nullopt;
  RankOutput p{int_field(m, "rank", -1), lines_field(m, "lines"), long_field(m, "dropped").value_or(0)};
  if (p.rank < 0 || p.dropped < 0) return std::nullopt;
  return p;
}

}  // namespace ddplaunch::messages
