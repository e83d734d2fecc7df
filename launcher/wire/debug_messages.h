// Interactive debugging: a rank's debugger relayed between its node and the master's console
// (stopped, output, resumed; typed lines; gdb attached on request): records and their codec.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"

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
rendezvous::Message encode(Generation generation, const DebugStopped& payload);
rendezvous::Message encode(Generation generation, const DebugOutput& payload);
rendezvous::Message encode(Generation generation, const DebugResumed& payload);
rendezvous::Message encode(Generation generation, const DebugInput& payload);
rendezvous::Message encode(Generation generation, const DebugAttachGdb& payload);
std::optional<DebugAttachGdb> decode_debug_attach_gdb(const rendezvous::Message& message);
// Text from another launcher comes back printable (control characters made visible).
std::optional<DebugStopped> decode_debug_stopped(const rendezvous::Message& message);
std::optional<DebugOutput> decode_debug_output(const rendezvous::Message& message);
std::optional<DebugResumed> decode_debug_resumed(const rendezvous::Message& message);
std::optional<DebugInput> decode_debug_input(const rendezvous::Message& message);

}  // namespace ddplaunch::messages
