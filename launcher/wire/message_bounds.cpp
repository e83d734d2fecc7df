// Cutting text and messages down to the bounds of message_bounds.h.
#include "wire/message_bounds.h"

#include <algorithm>

#include <fmt/format.h>

namespace ddplaunch::messages {

namespace {
bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Bytes one value takes once the wire escapes '\\', '\n' and '=' (two bytes each).
std::size_t escaped_size(std::string_view text) {
  return text.size() + static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
           return c == '\\' || c == '\n' || c == '=';
         }));
}
}  // namespace

std::string cut_middle(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  // The marker's digits count toward the bound: size it for the largest possible cut.
  const std::size_t marker_bytes = fmt::format("…({} bytes cut)…", text.size()).size();
  const std::size_t keep = max_bytes > marker_bytes ? max_bytes - marker_bytes : 0;
  std::size_t head = keep / 2;
  std::size_t tail_start = text.size() - (keep - head);
  while (head > 0 && is_utf8_continuation(text[head])) --head;
  while (tail_start < text.size() && is_utf8_continuation(text[tail_start])) ++tail_start;
  return fmt::format("{}…({} bytes cut)…{}", text.substr(0, head), tail_start - head, text.substr(tail_start));
}

std::deque<std::string> bounded_tail(const std::deque<std::string>& tail) {
  std::deque<std::string> kept;
  std::size_t total = 0;
  std::size_t dropped = 0;
  for (auto line = tail.rbegin(); line != tail.rend(); ++line) {
    std::string cut = cut_middle(*line, kMaxTailLineBytes);
    if (dropped > 0 || total + cut.size() + 1 > kMaxTailBytes - 64) {  // 64: room for the count line
      ++dropped;
      continue;
    }
    total += cut.size() + 1;
    kept.push_front(std::move(cut));
  }
  if (dropped > 0) kept.push_front(fmt::format("…({} earlier lines cut)", dropped));
  return kept;
}

std::size_t encoded_field_bytes(const rendezvous::Message& m) {
  std::size_t total = 0;
  for (const auto& [key, value] : m.fields) total += escaped_size(key) + escaped_size(value) + 2;  // '=', '\n'
  return total;
}

void fit_for_wire(rendezvous::Message& m) {
  for (auto& [key, value] : m.fields) value = cut_middle(value, kMaxFieldBytes);
  // Escapes can double a value: halve the largest field until the whole message fits.
  while (encoded_field_bytes(m) > kMaxMessageBytes) {
    auto largest = std::max_element(m.fields.begin(), m.fields.end(),
                                    [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    if (largest->second.size() <= kMaxTailLineBytes) break;  // only short fields left: cannot happen with ours
    largest->second = cut_middle(largest->second, largest->second.size() / 2);
  }
}

}  // namespace ddplaunch::messages
