// Codec of the timeline batches.
#include "wire/timeline_messages.h"

#include <chrono>

#include "wire/message_fields.h"
#include "timeline/timeline_wire.h"
#include "ddplaunch/rendezvous/printable.h"

namespace ddplaunch::messages {

std::vector<std::vector<timeline::Event>> timeline_batches(std::vector<timeline::Event> events) {
  std::vector<std::vector<timeline::Event>> batches(1);
  std::size_t bytes = 0;
  for (auto& e : events) {
    const std::size_t size = timeline::encode_events({e}).size();
    if (!batches.back().empty() &&
        (bytes + size > kMaxTimelineBatchBytes || batches.back().size() == timeline::kMaxEventsPerMessage)) {
      batches.emplace_back();
      bytes = 0;
    }
    bytes += size;
    batches.back().push_back(std::move(e));
  }
  if (batches.back().empty()) batches.pop_back();
  return batches;
}

rendezvous::Message encode(Generation generation, const TimelineEvents& p) {
  return make(Kind::TimelineEvents, generation,
              {{"sent_at_us", std::to_string(p.sent_at_us)}, {"events", timeline::encode_events(p.events)}});
}
std::optional<TimelineEvents> decode_timeline_events(const rendezvous::Message& m) {
  if (!is(m, Kind::TimelineEvents)) return std::nullopt;
  auto sent_at = long_field(m, "sent_at_us");
  auto events = timeline::decode_events(field(m, "events"));
  if (!sent_at || !events) return std::nullopt;
  for (auto& e : *events) {  // another launcher's text: made printable once, here
    e.name = rendezvous::printable(e.name);
    e.category = rendezvous::printable(e.category);
    e.detail = rendezvous::printable(e.detail);
  }
  return TimelineEvents{*sent_at, std::move(*events)};
}

}  // namespace ddplaunch::messages

namespace ddplaunch {

std::int64_t timeline_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace ddplaunch
