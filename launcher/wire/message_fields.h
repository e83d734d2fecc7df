// The fields of a launcher message, as every family's codec writes and reads them: one
// message made of a kind and its fields (bounded for the wire), and fields read back
// with a fallback, as numbers, or as text made printable (a peer's text reaches this terminal).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wire/launcher_messages.h"
#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch::messages {

rendezvous::Message make(Kind kind, Generation generation, std::vector<std::pair<std::string, std::string>> fields);
bool is(const rendezvous::Message& m, Kind kind);

std::string field(const rendezvous::Message& m, const std::string& key, const std::string& fallback = "");
// Free text another launcher sent is printed on this terminal: control characters and escape
// sequences become visible escapes (rendezvous/printable.h), so a peer can neither drive the
// terminal nor forge a log line. text_field: one line; lines_field: its lines kept apart.
std::string text_field(const rendezvous::Message& m, const std::string& key, const std::string& fallback = "");
std::string lines_field(const rendezvous::Message& m, const std::string& key, const std::string& fallback = "");
// Free text logged as one entry (a reason, a problem): its lines made printable and every line
// after the first indented, so that none can pass for a log line of this launcher.
std::string entry_field(const rendezvous::Message& m, const std::string& key, const std::string& fallback = "");
std::optional<long> long_field(const rendezvous::Message& m, const std::string& key);
// fallback when missing, malformed or beyond ±2^30.
int int_field(const rendezvous::Message& m, const std::string& key, int fallback);

}  // namespace ddplaunch::messages
