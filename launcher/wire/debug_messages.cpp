// Codec of the debugger relay.
#include "wire/debug_messages.h"

#include "wire/message_bounds.h"
#include "wire/message_fields.h"

namespace ddplaunch::messages {

namespace {
// A message that names only a rank (it left its debugger; attach gdb to it).
template <typename Payload>
std::optional<Payload> decode_rank_only(const rendezvous::Message& m, Kind kind) {
  if (!is(m, kind)) return std::nullopt;
  Payload p;
  p.rank = int_field(m, "rank", -1);
  if (p.rank < 0) return std::nullopt;
  return p;
}
}  // namespace

rendezvous::Message encode(Generation generation, const DebugStopped& p) {
  return make(Kind::DebugStopped, generation,
              {{"rank", std::to_string(p.rank)},
               {"local_rank", std::to_string(p.local_rank)},
               {"pid", std::to_string(p.pid)},
               {"host", p.host},
               {"file", p.file},
               {"line", std::to_string(p.line)},
               {"function", p.function},
               {"code", p.code},
               {"reason", p.reason}});
}
std::optional<DebugStopped> decode_debug_stopped(const rendezvous::Message& m) {
  if (!is(m, Kind::DebugStopped)) return std::nullopt;
  DebugStopped p;
  p.rank = int_field(m, "rank", -1);
  if (p.rank < 0) return std::nullopt;
  p.local_rank = int_field(m, "local_rank", -1);
  p.pid = int_field(m, "pid", 0);
  p.host = text_field(m, "host", "?");
  p.file = text_field(m, "file", "?");
  p.line = int_field(m, "line", 0);
  p.function = text_field(m, "function", "?");
  p.code = text_field(m, "code");
  p.reason = text_field(m, "reason");
  return p;
}

rendezvous::Message encode(Generation generation, const DebugOutput& p) {
  return make(Kind::DebugOutput, generation,
              {{"rank", std::to_string(p.rank)}, {"lines", cut_middle(p.lines, kMaxDebugOutputBytes)},
               {"prompt", p.prompt ? "1" : "0"},
               {"asks", !p.asks ? "" : p.secret ? "secret" : "line"}});
}
std::optional<DebugOutput> decode_debug_output(const rendezvous::Message& m) {
  if (!is(m, Kind::DebugOutput)) return std::nullopt;
  DebugOutput p;
  p.rank = int_field(m, "rank", -1);
  if (p.rank < 0) return std::nullopt;
  const std::string asks = field(m, "asks");
  p.asks = asks == "line" || asks == "secret";
  p.secret = asks == "secret";
  p.lines = p.asks ? text_field(m, "lines") : lines_field(m, "lines");  // a prompt: one unterminated line
  if (!p.asks && !p.lines.empty() && p.lines.back() != '\n') p.lines += '\n';
  p.prompt = field(m, "prompt") == "1";
  return p;
}

rendezvous::Message encode(Generation generation, const DebugResumed& p) {
  return make(Kind::DebugResumed, generation, {{"rank", std::to_string(p.rank)}});
}
std::optional<DebugResumed> decode_debug_resumed(const rendezvous::Message& m) {
  return decode_rank_only<DebugResumed>(m, Kind::DebugResumed);
}

// The line goes to a debugger as typed: one line, no newline inside (it would be a second command).
rendezvous::Message encode(Generation generation, const DebugInput& p) {
  return make(Kind::DebugInput, generation,
              {{"rank", std::to_string(p.rank)}, {"line", cut_middle(p.line.substr(0, p.line.find('\n')), 4096)}});
}
std::optional<DebugInput> decode_debug_input(const rendezvous::Message& m) {
  if (!is(m, Kind::DebugInput)) return std::nullopt;
  DebugInput p;
  p.rank = int_field(m, "rank", -1);
  p.line = field(m, "line");
  if (p.rank < 0 || p.line.find('\n') != std::string::npos) return std::nullopt;
  return p;
}

rendezvous::Message encode(Generation generation, const DebugAttachGdb& p) {
  return make(Kind::DebugAttachGdb, generation, {{"rank", std::to_string(p.rank)}});
}
std::optional<DebugAttachGdb> decode_debug_attach_gdb(const rendezvous::Message& m) {
  return decode_rank_only<DebugAttachGdb>(m, Kind::DebugAttachGdb);
}

}  // namespace ddplaunch::messages
