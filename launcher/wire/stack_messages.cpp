// Codec of the stack rounds.
#include "wire/stack_messages.h"

#include <algorithm>

#include "wire/message_bounds.h"
#include "wire/message_fields.h"

namespace ddplaunch::messages {

rendezvous::Message encode(Generation generation, const CollectStacks& p) {
  return make(Kind::CollectStacks, generation, {{"request", std::to_string(p.request)}});
}
std::optional<CollectStacks> decode_collect_stacks(const rendezvous::Message& m) {
  if (!is(m, Kind::CollectStacks)) return std::nullopt;
  auto request = long_field(m, "request");
  if (!request) return std::nullopt;
  return CollectStacks{*request};
}

// Per rank i: rank.i, pid.i, source.i, text.i (each text cut to kMaxStackBytes first; the
// whole message is then fitted like any other).
rendezvous::Message encode(Generation generation, const RankStacksReply& p) {
  std::vector<std::pair<std::string, std::string>> fields{{"request", std::to_string(p.request)}, {"host", p.host}};
  const std::size_t count = std::min(p.stacks.size(), kMaxStacksPerMessage);
  fields.emplace_back("count", std::to_string(count));
  for (std::size_t i = 0; i < count; ++i) {
    const RankStack& s = p.stacks[i];
    const std::string n = std::to_string(i);
    fields.emplace_back("rank." + n, std::to_string(s.rank));
    fields.emplace_back("pid." + n, std::to_string(s.pid));
    fields.emplace_back("source." + n, s.source.substr(0, 16));
    fields.emplace_back("text." + n, cut_middle(s.text, kMaxStackBytes));
  }
  return make(Kind::RankStacks, generation, std::move(fields));
}
std::optional<RankStacksReply> decode_rank_stacks(const rendezvous::Message& m) {
  if (!is(m, Kind::RankStacks)) return std::nullopt;
  RankStacksReply p;
  auto request = long_field(m, "request");
  auto count = long_field(m, "count");
  if (!request || !count || *count < 0 || static_cast<std::size_t>(*count) > kMaxStacksPerMessage) return std::nullopt;
  p.request = *request;
  p.host = text_field(m, "host", "?");
  for (long i = 0; i < *count; ++i) {
    const std::string n = std::to_string(i);
    RankStack s;
    s.rank = int_field(m, "rank." + n, -1);
    if (s.rank < 0) return std::nullopt;
    s.pid = long_field(m, "pid." + n).value_or(0);
    s.source = text_field(m, "source." + n, "?");
    s.text = cut_middle(lines_field(m, "text." + n), kMaxStackBytes);
    p.stacks.push_back(std::move(s));
  }
  return p;
}

}  // namespace ddplaunch::messages
