// Parsing "[node N rank R] text".
#include "fanout/rank_line.h"

#include <charconv>

namespace ddplaunch::fanout {

namespace {
// The number at the start of `text` (moved past it); false when there is none.
bool take_number(std::string_view& text, int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc{} || end == text.data() || out < 0) return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return true;
}

bool take(std::string_view& text, std::string_view word) {
  if (text.substr(0, word.size()) != word) return false;
  text.remove_prefix(word.size());
  return true;
}
}  // namespace

std::optional<RankLine> parse_rank_line(std::string_view line) {
  RankLine parsed;
  if (!take(line, "[node ") || !take_number(line, parsed.node) || !take(line, " rank ") ||
      !take_number(line, parsed.rank) || !take(line, "] "))
    return std::nullopt;
  parsed.text = line;
  return parsed;
}

}  // namespace ddplaunch::fanout
