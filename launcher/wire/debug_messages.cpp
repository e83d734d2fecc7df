// The fields of a debugger's output whose reading depends on each other: what it asks for, and
// its lines.
#include "wire/debug_messages.h"

#include "ddplaunch/rendezvous/printable.h"
#include "wire/message_bounds.h"

namespace ddplaunch::messages {

std::string DebugAsks::write(const DebugOutput& p) const { return !p.asks ? "" : p.secret ? "secret" : "line"; }
bool DebugAsks::read(const std::string* sent, DebugOutput& p) const {
  const std::string asks = sent ? *sent : "";
  p.asks = asks == "line" || asks == "secret";
  p.secret = asks == "secret";
  return true;
}

std::string DebugOutputLines::write(const DebugOutput& p) const { return cut_middle(p.lines, kMaxDebugOutputBytes); }
bool DebugOutputLines::read(const std::string* sent, DebugOutput& p) const {
  const std::string_view lines = sent ? std::string_view(*sent) : std::string_view();
  p.lines = p.asks ? rendezvous::printable(lines) : rendezvous::printable_lines(lines);  // a prompt: one line
  if (!p.asks && !p.lines.empty() && p.lines.back() != '\n') p.lines += '\n';
  return true;
}

}  // namespace ddplaunch::messages
