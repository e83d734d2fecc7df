// The fields of a launcher message: made, bounded, and read back (printable where a peer wrote them).
#include "wire/message_fields.h"

#include <charconv>

#include "wire/message_bounds.h"
#include "ddplaunch/rendezvous/printable.h"

namespace ddplaunch::messages {

rendezvous::Message make(Kind kind, Generation generation, std::vector<std::pair<std::string, std::string>> fields) {
  rendezvous::Message m;
  m.type = std::string(kind_name(kind));
  m.generation = generation;
  for (auto& [k, v] : fields) m.fields[k] = std::move(v);
  fit_for_wire(m);  // whatever a payload holds, the message stays under the frame limit
  return m;
}

std::string field(const rendezvous::Message& m, const std::string& key, const std::string& fallback) {
  auto it = m.fields.find(key);
  return it == m.fields.end() ? fallback : it->second;
}

std::string text_field(const rendezvous::Message& m, const std::string& key, const std::string& fallback) {
  return rendezvous::printable(field(m, key, fallback));
}
std::string lines_field(const rendezvous::Message& m, const std::string& key, const std::string& fallback) {
  return rendezvous::printable_lines(field(m, key, fallback));
}

std::string entry_field(const rendezvous::Message& m, const std::string& key, const std::string& fallback) {
  std::string out = lines_field(m, key, fallback);
  for (std::size_t at = out.find('\n'); at != std::string::npos; at = out.find('\n', at + 1)) out.insert(at + 1, "    ");
  return out;
}

std::optional<long> long_field(const rendezvous::Message& m, const std::string& key) {
  auto it = m.fields.find(key);
  if (it == m.fields.end()) return std::nullopt;
  long value = 0;
  const std::string& text = it->second;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

int int_field(const rendezvous::Message& m, const std::string& key, int fallback) {
  auto v = long_field(m, key);
  return v && *v >= -(1L << 30) && *v <= (1L << 30) ? static_cast<int>(*v) : fallback;
}

bool is(const rendezvous::Message& m, Kind kind) { return kind_of(m) == kind; }

}  // namespace ddplaunch::messages
