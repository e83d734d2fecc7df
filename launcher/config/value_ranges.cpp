// Checking a value against its key's range, and saying so in the user's terms.
#include "config/value_ranges.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "config/flag_names.h"
#include "config/option_table.h"

namespace ddplaunch {

namespace {

// A number in C's syntax (inf and nan included) or YAML's (.inf, -.inf, .nan); nullopt for
// words like "auto".
std::optional<double> number_of(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == ".inf" || s == "+.inf") return HUGE_VAL;
  if (s == "-.inf") return -HUGE_VAL;
  if (s == ".nan") return std::nan("");
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;  // ±HUGE_VAL on overflow (1e999): out of every range of the table
}

}  // namespace

std::optional<std::string> out_of_range(std::string_view key, std::string_view shown_as, std::string_view text) {
  const OptionSpec* row = find_key(key);
  auto value = number_of(text);
  if (!row || !row->range.any() || !value) return std::nullopt;
  const ValueRange& r = row->range;
  if (*value >= r.min && *value <= r.max) return std::nullopt;  // false for nan
  // Name the other spelling, so the user finds the key wherever they set it.
  const std::string flag = row->names.empty() ? "" : "--" + primary_name(*row);
  const bool shown_as_flag = !flag.empty() && shown_as.find(flag) != std::string_view::npos;
  const std::string other = shown_as_flag ? fmt::format("YAML: {}", row->key)
                            : flag.empty() ? fmt::format("set with --set {}=VALUE or in YAML", row->key)
                                           : fmt::format("flag: {}", flag);
  return fmt::format("{} {} is out of range: allowed {} to {}{}{} ({})", shown_as, text, r.min, r.max,
                     r.unit.empty() ? "" : " ", r.unit, other);
}

}  // namespace ddplaunch
