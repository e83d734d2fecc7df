// The node's timeline events for the job's timeline, in batches that each fit one message:
// record, declared once on the wire.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "timeline/timeline_event.h"
#include "wire/message_declaration.h"

namespace ddplaunch::messages {

// The node's timeline events since its last batch; sent_at_us: its clock when it sent them
// (the master aligns the node's clock with it). One batch holds at most
// timeline::kMaxEventsPerMessage events and kMaxTimelineBatchBytes of them encoded.
struct TimelineEvents { std::int64_t sent_at_us = 0; std::vector<timeline::Event> events; };
inline constexpr std::size_t kMaxTimelineBatchBytes = 48 * 1024;
// The events cut into batches that each fit one message.
std::vector<std::vector<timeline::Event>> timeline_batches(std::vector<timeline::Event> events);

// The events in the timeline's own encoding (timeline/timeline_wire.h); read: refused unless
// they decode, each one's name, category and detail made printable.
struct TimelineEventList {
  std::string write(const std::vector<timeline::Event>& events) const;
  bool read(const std::string* sent, std::vector<timeline::Event>& events) const;
};

template <>
struct WireFields<TimelineEvents> {
  static constexpr Kind kind = Kind::TimelineEvents;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    static_assert(std::is_same_v<std::int64_t, long>, "sent_at_us is read as a long");
    io("sent_at_us", p.sent_at_us, Long{.required = true});
    io("events", p.events, TimelineEventList{});
  }
};

// The name the rest of the tree calls: decode<Payload> under its older name.
inline constexpr auto& decode_timeline_events = decode<TimelineEvents>;

}  // namespace ddplaunch::messages

namespace ddplaunch {

// This process's steady clock in microseconds: the clock a node stamps its timeline events
// and batches with, and the master reads when it aligns them.
std::int64_t timeline_clock_us();

}  // namespace ddplaunch
