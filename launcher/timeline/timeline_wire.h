// A node's timeline events as one text field of its `timeline_events` message: one line per
// event, tab-separated. Decoding is strict and bounded: it is another launcher's text.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "timeline/timeline_event.h"

namespace ddplaunch::timeline {

inline constexpr std::size_t kMaxEventsPerMessage = 2048;
inline constexpr std::size_t kMaxNameChars = 64;
inline constexpr std::size_t kMaxCategoryChars = 32;
inline constexpr std::size_t kMaxDetailChars = 1024;

// Tabs and line breaks inside a text become spaces; longer texts are cut at the limits above.
std::string encode_events(const std::vector<Event>& events);
// nullopt: a malformed line, or more than kMaxEventsPerMessage events. A node's events carry
// no node (the master knows who sent them) and no flows.
std::optional<std::vector<Event>> decode_events(std::string_view text);

}  // namespace ddplaunch::timeline
