// The node's timeline events for the job's timeline, in batches that each fit one message:
// record and codec.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "timeline/timeline_event.h"

namespace ddplaunch::messages {

// The node's timeline events since its last batch; sent_at_us: its clock when it sent them
// (the master aligns the node's clock with it). One batch holds at most
// timeline::kMaxEventsPerMessage events and kMaxTimelineBatchBytes of them encoded.
struct TimelineEvents { std::int64_t sent_at_us = 0; std::vector<timeline::Event> events; };
inline constexpr std::size_t kMaxTimelineBatchBytes = 48 * 1024;
// The events cut into batches that each fit one message.
std::vector<std::vector<timeline::Event>> timeline_batches(std::vector<timeline::Event> events);
rendezvous::Message encode(Generation generation, const TimelineEvents& payload);
std::optional<TimelineEvents> decode_timeline_events(const rendezvous::Message& message);

}  // namespace ddplaunch::messages

namespace ddplaunch {

// This process's steady clock in microseconds: the clock a node stamps its timeline events
// and batches with, and the master reads when it aligns them.
std::int64_t timeline_clock_us();

}  // namespace ddplaunch
