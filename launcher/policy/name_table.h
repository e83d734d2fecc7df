// One enum ↔ name table, so each enum's names are written once and read both ways by
// the wire codec, the reports and the status table.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace ddplaunch {

template <class Enum, std::size_t N>
struct NameTable {
  std::array<std::pair<Enum, std::string_view>, N> entries;

  std::string_view name(Enum value) const {
    for (const auto& [e, n] : entries)
      if (e == value) return n;
    return entries.front().second;
  }
  std::optional<Enum> parse(std::string_view text) const {
    for (const auto& [e, n] : entries)
      if (n == text) return e;
    return std::nullopt;
  }
};

}  // namespace ddplaunch
