// The group's generation: 0 for the workers' first start, one more at every restart. One type
// from the wire to the launcher's policies, so a generation is never mixed up with a count or
// a rank, and never silently changes width between the two.
#pragma once

#include <charconv>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddplaunch::rendezvous {

struct Generation {
  std::uint64_t value = 0;

  auto operator<=>(const Generation&) const = default;
  // The generation a restart starts.
  constexpr Generation next() const { return Generation{value + 1}; }
};

// Decimal, as on the wire and in every log line.
inline std::string to_string(Generation g) { return std::to_string(g.value); }

// The wire's decimal text, all of it; nullopt for anything else (a sign, a space, overflow).
inline std::optional<Generation> parse_generation(std::string_view text) {
  Generation g;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, g.value);
  if (text.empty() || ec != std::errc{} || p != end) return std::nullopt;
  return g;
}

}  // namespace ddplaunch::rendezvous

namespace ddplaunch {
using rendezvous::Generation;
}  // namespace ddplaunch
