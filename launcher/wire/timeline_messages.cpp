// The timeline batches, and the events field of one.
#include "wire/timeline_messages.h"

#include <chrono>

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

std::string TimelineEventList::write(const std::vector<timeline::Event>& events) const {
  return timeline::encode_events(events);
}
bool TimelineEventList::read(const std::string* sent, std::vector<timeline::Event>& events) const {
  auto decoded = timeline::decode_events(sent ? *sent : "");
  if (!decoded) return false;
  for (auto& e : *decoded) {  // another launcher's text: made printable once, here
    e.name = rendezvous::printable(e.name);
    e.category = rendezvous::printable(e.category);
    e.detail = rendezvous::printable(e.detail);
  }
  events = std::move(*decoded);
  return true;
}

}  // namespace ddplaunch::messages

namespace ddplaunch {

std::int64_t timeline_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace ddplaunch
