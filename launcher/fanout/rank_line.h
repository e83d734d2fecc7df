// A worker's line as a remote ddplaunch relays it, "[node N rank R] text", taken apart so that
// the fan-out can merge identical lines of ranks on different nodes ("[ranks 0-7] done").
// Anything else (a user's prefix template, a launcher's own log line, ssh's words) is not one.
#pragma once

#include <optional>
#include <string_view>

namespace ddplaunch::fanout {

struct RankLine {
  int node = -1;
  int rank = -1;
  std::string_view text;  // after the prefix and its one space
};

std::optional<RankLine> parse_rank_line(std::string_view line);

}  // namespace ddplaunch::fanout
