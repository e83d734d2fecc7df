// The line format of a node's timeline events: at_us, generation, rank, s|i, name, category, detail.
#include "timeline/timeline_wire.h"

#include <charconv>

namespace ddplaunch::timeline {

namespace {
constexpr std::size_t kFields = 7;

std::string one_line(std::string_view text, std::size_t limit) {
  std::string out(text.substr(0, limit));
  for (char& c : out)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return out;
}

template <typename Number>
bool parse_number(std::string_view text, Number& out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

std::vector<std::string_view> split(std::string_view line, char separator) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t at = line.find(separator, start);
    parts.push_back(line.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}
}  // namespace

std::string encode_events(const std::vector<Event>& events) {
  std::string text;
  for (const Event& e : events) {
    text += std::to_string(e.at_us) + '\t' + to_string(e.generation) + '\t' + std::to_string(e.rank) + '\t' +
            (e.type == EventType::State ? "s" : "i") + '\t' + one_line(e.name, kMaxNameChars) + '\t' +
            one_line(e.category, kMaxCategoryChars) + '\t' + one_line(e.detail, kMaxDetailChars) + '\n';
  }
  return text;
}

std::optional<std::vector<Event>> decode_events(std::string_view text) {
  std::vector<Event> events;
  for (std::string_view line : split(text, '\n')) {
    if (line.empty()) continue;
    if (events.size() == kMaxEventsPerMessage) return std::nullopt;
    const auto fields = split(line, '\t');
    if (fields.size() != kFields) return std::nullopt;
    Event e;
    const auto generation = rendezvous::parse_generation(fields[1]);
    if (!parse_number(fields[0], e.at_us) || !generation || !parse_number(fields[2], e.rank)) return std::nullopt;
    e.generation = *generation;
    if (e.rank < kNodeLane) return std::nullopt;
    if (fields[3] != "s" && fields[3] != "i") return std::nullopt;
    e.type = fields[3] == "s" ? EventType::State : EventType::Instant;
    if (fields[4].empty() || fields[4].size() > kMaxNameChars || fields[5].size() > kMaxCategoryChars ||
        fields[6].size() > kMaxDetailChars)
      return std::nullopt;
    e.name = fields[4];
    e.category = fields[5];
    e.detail = fields[6];
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace ddplaunch::timeline
