// Typed reads from an environment map (see env_values.h).
#include "env_values.h"

#include <charconv>

#include <fmt/format.h>

namespace ddplaunch::cluster::env_values {

std::optional<std::string> get(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::optional<std::uint64_t> parse_count(const char* name, const std::string& value,
                                         std::uint64_t max, std::string& error) {
  std::uint64_t v = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && ptr == end && v > max)) {
    error = fmt::format("{}=\"{}\" is out of range (at most {})", name, value, max);
    return std::nullopt;
  }
  if (ec != std::errc() || ptr != end) {
    error = fmt::format("{}=\"{}\" is not a non-negative whole number", name, value);
    return std::nullopt;
  }
  return v;
}

}  // namespace ddplaunch::cluster::env_values
