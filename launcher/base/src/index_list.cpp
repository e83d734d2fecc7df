// Parsing and printing of range lists ("0-3,8").
#include "ddplaunch/base/index_list.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace ddplaunch {

namespace {
std::optional<int> parse_index(std::string_view text, int max_index) {
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > max_index) return std::nullopt;
  return value;
}
}  // namespace

std::optional<IndexList> parse_index_list(std::string_view text, int max_index) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  IndexList out;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    auto dash = item.find('-');
    auto first = parse_index(item.substr(0, dash), max_index);
    auto last = dash == std::string_view::npos ? first : parse_index(item.substr(dash + 1), max_index);
    if (!first || !last || *last < *first) return std::nullopt;
    for (int index = *first; index <= *last; ++index) out.push_back(index);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string format_index_list(const IndexList& indexes) {
  std::string out;
  for (std::size_t i = 0; i < indexes.size();) {
    std::size_t j = i;
    while (j + 1 < indexes.size() && indexes[j + 1] == indexes[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", indexes[i]) : fmt::format("{}-{}", indexes[i], indexes[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace ddplaunch
