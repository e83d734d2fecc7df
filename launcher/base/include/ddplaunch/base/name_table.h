// One enum ↔ name table, so each enum's names are written once and read both ways: by the
// wire codec, the saved state, the reports, the status table and the config's choices.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
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
  // "report, restart, stop or auto", for a message saying what a value must be (an empty
  // name, a choice that is written as nothing, is not listed).
  std::string listed() const {
    std::string out;
    std::size_t shown = 0, named = 0;
    for (const auto& entry : entries) named += entry.second.empty() ? 0 : 1;
    for (const auto& [e, n] : entries) {
      if (n.empty()) continue;
      out += shown == 0 ? "" : shown + 1 == named ? " or " : ", ";
      out += n;
      ++shown;
    }
    return out;
  }
};

}  // namespace ddplaunch
