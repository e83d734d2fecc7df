// Size bounds on what a node sends the master. A worker's output can be any size; a launcher
// message must stay well under the rendezvous frame limit (1 MiB), or the master drops the
// node as lost and never prints the root cause. The output tail is cut per line and in
// total; every message is then trimmed, largest field first, to a fixed encoded size.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch::messages {

inline constexpr std::size_t kMaxTailLineBytes = 1024;        // one quoted output line
inline constexpr std::size_t kMaxTailBytes = 64 * 1024;       // all quoted lines together
inline constexpr std::size_t kMaxFieldBytes = 64 * 1024;      // any other text field
inline constexpr std::size_t kMaxMessageBytes = 256 * 1024;   // a whole message, as encoded

// `text` itself when it fits in `max_bytes`; otherwise its start and end around
// "…(N bytes cut)…", at most `max_bytes` long, never splitting a UTF-8 character.
std::string cut_middle(std::string_view text, std::size_t max_bytes);

// The last output lines, each cut to kMaxTailLineBytes, the oldest dropped (and counted in a
// first line "…(K earlier lines cut)") until they fit in kMaxTailBytes. The last lines hold
// the error; the node matched init-failure signatures on the full lines before this.
std::deque<std::string> bounded_tail(const std::deque<std::string>& tail);

// Bytes the message's fields take on the wire, escapes included.
std::size_t encoded_field_bytes(const rendezvous::Message& message);

// Cuts every field to kMaxFieldBytes, then the largest ones further until the message fits
// in kMaxMessageBytes; a message that fits is left as it is.
void fit_for_wire(rendezvous::Message& message);

}  // namespace ddplaunch::messages
