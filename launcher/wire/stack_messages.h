// Stacks on demand: the master asks every node for its ranks' stacks in one round, each node
// answers with them: records, each declared once on the wire.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "policy/stack_report.h"
#include "wire/message_declaration.h"

namespace ddplaunch::messages {

struct CollectStacks { long request = 0; };
struct RankStacksReply { long request = 0; std::string host; std::vector<RankStack> stacks; };
inline constexpr std::size_t kMaxStackBytes = 16 * 1024;  // one rank's frames on the wire
inline constexpr std::size_t kMaxStacksPerMessage = 1024;
inline constexpr std::size_t kMaxStackSourceBytes = 16;   // "python", "eu-stack", ...

template <>
struct WireFields<CollectStacks> {
  static constexpr Kind kind = Kind::CollectStacks;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("request", p.request, Long{.required = true});
  }
};

// One rank's stack inside a reply, as numbered fields (rank.0, pid.0, source.0, text.0, ...);
// its text is cut to kMaxStackBytes when written and again when read.
template <>
struct WireFields<RankStack> {
  template <class Io, class Self>
  static void list(Io& io, Self& s) {
    io("rank", s.rank, Int{.fallback = -1, .min = 0});
    io("pid", s.pid, Long{.fallback = 0});
    io("source", s.source, Text{.fallback = "?", .max_bytes = kMaxStackSourceBytes, .cut = Cut::End});
    io("text", s.text, Lines{.max_bytes = kMaxStackBytes, .cut_when_read = true});
  }
};

template <>
struct WireFields<RankStacksReply> {
  static constexpr Kind kind = Kind::RankStacks;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("request", p.request, Long{.required = true});
    io("host", p.host, Text{.fallback = "?"});
    io.each("count", p.stacks, kMaxStacksPerMessage);
  }
};

// The names the rest of the tree calls: decode<Payload> under its older name.
inline constexpr auto& decode_collect_stacks = decode<CollectStacks>;
inline constexpr auto& decode_rank_stacks = decode<RankStacksReply>;

}  // namespace ddplaunch::messages
