// Output you can steer: the console's `:ranks` (which ranks the terminals show) and `ddplaunch
// tail --rank R` (a followed rank's lines, batched): records, each declared once on the wire.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "wire/message_declaration.h"

namespace ddplaunch::messages {

struct OutputFilter { std::vector<int> ranks; };  // empty: every rank
struct FollowRank { int rank = -1; int seconds = 0; };
// lines: whole lines, each ended by '\n'; dropped: lines the node could not send meanwhile.
struct RankOutput { int rank = -1; std::string lines; long dropped = 0; };
inline constexpr std::size_t kMaxRankOutputBytes = 48 * 1024;  // one batch of a followed rank's lines
inline constexpr int kMaxFollowSeconds = 3600;                 // one lease of a followed rank

// Global ranks as an index list ("1,5-7"); "" or none: every rank. A list that does not parse,
// or names a rank far above any world size, refuses the message.
struct RankList {
  std::string write(const std::vector<int>& ranks) const;
  bool read(const std::string* sent, std::vector<int>& ranks) const;
};

template <>
struct WireFields<OutputFilter> {
  static constexpr Kind kind = Kind::OutputFilter;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("ranks", p.ranks, RankList{});
  }
};

template <>
struct WireFields<FollowRank> {
  static constexpr Kind kind = Kind::FollowRank;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("rank", p.rank, Int{.fallback = -1, .min = 0});
    io("seconds", p.seconds, Int{.fallback = -1, .min = 0, .max = kMaxFollowSeconds});
  }
};

template <>
struct WireFields<RankOutput> {
  static constexpr Kind kind = Kind::RankOutput;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("rank", p.rank, Int{.fallback = -1, .min = 0});
    io("lines", p.lines, Lines{.max_bytes = kMaxRankOutputBytes});
    io("dropped", p.dropped, Long{.fallback = 0, .min = 0});
  }
};

// The names the rest of the tree calls: decode<Payload> under its older name.
inline constexpr auto& decode_output_filter = decode<OutputFilter>;
inline constexpr auto& decode_follow_rank = decode<FollowRank>;
inline constexpr auto& decode_rank_output = decode<RankOutput>;

}  // namespace ddplaunch::messages
