// Interactive debugging: a rank's debugger relayed between its node and the master's console
// (stopped, output, resumed; typed lines; gdb attached on request): records, each declared
// once on the wire.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "wire/message_declaration.h"

namespace ddplaunch::messages {

struct DebugStopped {
  int rank = -1, local_rank = -1, pid = 0;
  std::string host, file, function, code, reason;
  int line = 0;
};
// Also the rank's own prompt, when it is in no debugger (`asks`): `lines` is the prompt as
// shown, unterminated ("" when it waits no more); `secret` for getpass (typing hidden).
struct DebugOutput { int rank = -1; std::string lines; bool prompt = false; bool asks = false; bool secret = false; };
struct DebugResumed { int rank = -1; };
struct DebugInput { int rank = -1; std::string line; };
struct DebugAttachGdb { int rank = -1; };
inline constexpr std::size_t kMaxDebugOutputBytes = 48 * 1024;  // one relayed chunk of a debugger's output
inline constexpr std::size_t kMaxDebugInputBytes = 4096;        // one typed line

inline constexpr Int kRankNumber{.fallback = -1, .min = 0};  // a global rank: none refuses the message

// What a DebugOutput asks for: "" (nothing: debugger output), "line" or "secret" (the rank's
// own prompt; getpass). Its lines are read after it: a prompt is one unterminated line made
// printable; debugger output keeps its lines apart and ends with a line break.
struct DebugAsks {
  std::string write(const DebugOutput& output) const;
  bool read(const std::string* sent, DebugOutput& output) const;
};
struct DebugOutputLines {
  std::string write(const DebugOutput& output) const;
  bool read(const std::string* sent, DebugOutput& output) const;
};

template <>
struct WireFields<DebugStopped> {
  static constexpr Kind kind = Kind::DebugStopped;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("rank", p.rank, kRankNumber);
    io("local_rank", p.local_rank, Int{.fallback = -1});
    io("pid", p.pid, Int{.fallback = 0});
    io("host", p.host, Text{.fallback = "?"});
    io("file", p.file, Text{.fallback = "?"});
    io("line", p.line, Int{.fallback = 0});
    io("function", p.function, Text{.fallback = "?"});
    io("code", p.code, Text{});
    io("reason", p.reason, Text{});
  }
};

template <>
struct WireFields<DebugOutput> {
  static constexpr Kind kind = Kind::DebugOutput;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("rank", p.rank, kRankNumber);
    io("asks", p, DebugAsks{});
    io("lines", p, DebugOutputLines{});  // after "asks": how they are read depends on it
    io("prompt", p.prompt, Flag{});
  }
};

template <>
struct WireFields<DebugResumed> {
  static constexpr Kind kind = Kind::DebugResumed;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("rank", p.rank, kRankNumber);
  }
};

template <>
struct WireFields<DebugInput> {
  static constexpr Kind kind = Kind::DebugInput;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("rank", p.rank, kRankNumber);
    io("line", p.line, TypedLine{.max_bytes = kMaxDebugInputBytes});
  }
};

template <>
struct WireFields<DebugAttachGdb> {
  static constexpr Kind kind = Kind::DebugAttachGdb;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("rank", p.rank, kRankNumber);
  }
};

// The names the rest of the tree calls: decode<Payload> under its older name.
inline constexpr auto& decode_debug_stopped = decode<DebugStopped>;
inline constexpr auto& decode_debug_output = decode<DebugOutput>;
inline constexpr auto& decode_debug_resumed = decode<DebugResumed>;
inline constexpr auto& decode_debug_input = decode<DebugInput>;
inline constexpr auto& decode_debug_attach_gdb = decode<DebugAttachGdb>;

}  // namespace ddplaunch::messages
