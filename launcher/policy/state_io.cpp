// StateWriter / StateReader: see state_io.h. What is not a template: text, times, the engine,
// and the wording of the errors.
#include "policy/state_io.h"

#include <sstream>

#include <fmt/format.h>

#include "ddplaunch/rendezvous/printable.h"

namespace ddplaunch {

namespace {

// Far beyond any distance between two times of one job (an unset time point lies the saving
// machine's uptime back), near enough that re-basing cannot overflow the clock's nanoseconds:
// a larger offset is a damaged document.
constexpr long long kMaxOffsetMs = 1'000'000'000'000;  // about 31 years

constexpr std::string_view kHexDigits = "0123456789abcdef";
constexpr const char* kHexKey = "hex";  // the key of text that is not UTF-8: {"hex": "..."}

// A value, for an error message: a scalar's first characters, a container by its size (a
// document nested a million deep must not be printed, nor overflow the stack printing it).
std::string shown(const StateJson& json) {
  if (json.is_array()) return fmt::format("a list of {}", json.size());
  if (json.is_object()) return fmt::format("an object of {} field(s)", json.size());
  std::string text = json.dump(-1, ' ', false, StateJson::error_handler_t::replace);
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

std::optional<std::string> from_hex(const std::string& hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const auto high = kHexDigits.find(hex[i]), low = kHexDigits.find(hex[i + 1]);
    if (high == std::string_view::npos || low == std::string_view::npos) return std::nullopt;
    bytes += static_cast<char>(high * 16 + low);
  }
  return bytes;
}

}  // namespace

StateJson StateWriter::encode_text(const std::string& text) {
  if (rendezvous::valid_utf8(text)) return text;
  std::string hex;
  for (unsigned char c : text) {
    hex += kHexDigits[c >> 4];
    hex += kHexDigits[c & 0xf];
  }
  return StateJson{{kHexKey, hex}};
}

// The engine's own text form (every word of its state and its position), as the standard
// defines it: the same numbers follow on any machine.
StateJson StateWriter::encode_engine(const std::mt19937& engine) {
  std::ostringstream text;
  text << engine;
  return text.str();
}

// Steady-clock values mean nothing on another machine: each is saved as its distance from the
// save's `now`, and the restore adds it to its own `now`.
long long StateWriter::offset_ms(PolicyClock::time_point t) const {
  return std::chrono::round<std::chrono::milliseconds>(t - now_).count();
}

void StateReader::fail(const std::string& where, const std::string& what) const {
  if (failed()) return;
  *error_ = fmt::format("'{}' {}", where, what);
}

void StateReader::fail_type(const std::string& where, const char* expected, const StateJson& found) const {
  fail(where, fmt::format("should be {}, not {}", expected, shown(found)));
}

std::optional<long long> StateReader::integer(const StateJson& json, const std::string& where, long long min,
                                              long long max) const {
  if (!json.is_number_integer()) {
    fail_type(where, "a whole number", json);
    return std::nullopt;
  }
  const bool in_range = json.is_number_unsigned()
                            ? json.get<unsigned long long>() <= static_cast<unsigned long long>(max)
                            : json.get<long long>() >= min && json.get<long long>() <= max;
  if (!in_range) {
    fail(where, fmt::format("is {}, outside {}..{}", shown(json), min, max));
    return std::nullopt;
  }
  return json.get<long long>();
}

void StateReader::decode_text(const StateJson& json, const std::string& where, std::string& text) const {
  if (json.is_string()) {
    text = json.get<std::string>();
    return;
  }
  const auto hex = json.is_object() && json.size() == 1 ? json.find(kHexKey) : json.end();
  std::optional<std::string> bytes;
  if (hex != json.end() && hex->is_string()) bytes = from_hex(hex->get<std::string>());
  if (!bytes) return fail_type(where, "text (a string, or {\"hex\": \"...\"})", json);
  text = std::move(*bytes);
}

void StateReader::decode_engine(const StateJson& json, const std::string& where, std::mt19937& engine) const {
  if (!json.is_string()) return fail_type(where, "the random engine's state as text", json);
  std::istringstream text(json.get<std::string>());
  std::mt19937 read;
  text >> read;
  if (text.fail() || !(text >> std::ws).eof())
    return fail(where, "is not a random engine's state (624 words and a position, as std::mt19937 writes them)");
  engine = read;
}

void StateReader::decode_time(const StateJson& json, const std::string& where, PolicyClock::time_point& t) const {
  if (auto ms = integer(json, where, -kMaxOffsetMs, kMaxOffsetMs)) t = now_ + std::chrono::milliseconds(*ms);
}

}  // namespace ddplaunch
