// The field codecs of field_codecs.h: numbers, flags, and text bounded and made printable.
#include "wire/field_codecs.h"

#include <charconv>
#include <optional>

#include "ddplaunch/rendezvous/printable.h"
#include "ddplaunch/rendezvous/token_proof.h"
#include "wire/message_bounds.h"

namespace ddplaunch::messages {

namespace {
std::optional<long> parse_long(const std::string* sent) {
  if (!sent) return std::nullopt;
  long value = 0;
  const auto [end, error] = std::from_chars(sent->data(), sent->data() + sent->size(), value);
  if (error != std::errc{} || end != sent->data() + sent->size()) return std::nullopt;
  return value;
}

std::string cut_to(std::string_view text, std::size_t max_bytes, Cut where) {
  if (max_bytes == 0) return std::string(text);
  return where == Cut::Middle ? cut_middle(text, max_bytes) : std::string(text.substr(0, max_bytes));
}

template <Shown How>
std::string shown(std::string_view text) {
  if constexpr (How == Shown::Line) {
    return rendezvous::printable(text);
  } else {
    std::string out = rendezvous::printable_lines(text);
    if constexpr (How == Shown::Entry) {
      for (std::size_t at = out.find('\n'); at != std::string::npos; at = out.find('\n', at + 1))
        out.insert(at + 1, "    ");
    }
    return out;
  }
}
}  // namespace

std::string Int::write(int value) const { return std::to_string(value); }
bool Int::read(const std::string* sent, int& value) const {
  const auto parsed = parse_long(sent);
  constexpr long kLimit = 1L << 30;
  value = parsed && *parsed >= -kLimit && *parsed <= kLimit ? static_cast<int>(*parsed) : fallback;
  return value >= min && value <= max;
}

std::string Long::write(long value) const { return std::to_string(value); }
bool Long::read(const std::string* sent, long& value) const {
  const auto parsed = parse_long(sent);
  if (!parsed && required) return false;
  value = parsed.value_or(fallback);
  return value >= min;
}

std::string Flag::write(bool value) const { return value ? "1" : "0"; }
bool Flag::read(const std::string* sent, bool& value) const {
  value = sent && *sent == "1";
  return true;
}

template <Shown How>
std::string ShownText<How>::write(const std::string& value) const {
  if (value.empty() && empty_as_fallback) return std::string(fallback);
  return cut_to(value, max_bytes, cut);
}
template <Shown How>
bool ShownText<How>::read(const std::string* sent, std::string& value) const {
  value = shown<How>(sent ? std::string_view(*sent) : fallback);
  if (cut_when_read) value = cut_to(value, max_bytes, cut);
  return true;
}
template struct ShownText<Shown::Line>;
template struct ShownText<Shown::Lines>;
template struct ShownText<Shown::Entry>;

std::string TypedLine::write(const std::string& value) const {
  return cut_to(std::string_view(value).substr(0, value.find('\n')), max_bytes, Cut::Middle);
}
bool TypedLine::read(const std::string* sent, std::string& value) const {
  value = sent ? *sent : "";
  return value.find('\n') == std::string::npos;
}

std::string RunNonce::write(const std::string& value) const { return value; }
bool RunNonce::read(const std::string* sent, std::string& value) const {
  value = sent && rendezvous::is_run_nonce(*sent) ? *sent : "";
  return true;
}

}  // namespace ddplaunch::messages
