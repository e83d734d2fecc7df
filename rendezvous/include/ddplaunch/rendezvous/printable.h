// Text that came from a peer, made safe to log: control characters become visible escapes, so
// a hostname, job id or reason can neither start a forged log line nor drive the terminal.
#pragma once

#include <string>
#include <string_view>

namespace ddplaunch::rendezvous {

// "\n" → "\\n", "\r" → "\\r", "\t" → "\\t", other C0 bytes, DEL and ESC → "\\xHH"; UTF-8 C1
// controls (U+0080..U+009F, e.g. CSI) → "\\u00HH"; bytes that are not valid UTF-8 → "\\xHH".
// Printable ASCII and valid UTF-8 pass unchanged. Backslashes are kept as they are.
std::string printable(std::string_view text);

// printable() of each line, the line breaks kept: a multi-line answer (a status table) shown as
// it was meant, but unable to drive the terminal.
std::string printable_lines(std::string_view text);

// True when `text` is valid UTF-8 throughout (what a JSON string can carry as it is).
bool valid_utf8(std::string_view text);

}  // namespace ddplaunch::rendezvous
