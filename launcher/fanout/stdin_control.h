// The remote side of a fan-out. The fan-out hands each node's ddplaunch the rendezvous token
// as the first line of its stdin (--token-stdin: never in argv, where ps shows it), then the
// variables it passes (--env-stdin: -x, --env-file and the forwarded ones, whose values may
// be secrets such as an API key: never in argv either), then keeps that stdin open as its control channel (--stop-on-stdin-eof): a line naming a signal
// ("SIGINT") acts as that signal arriving here, and end-of-file — the fan-out, or its ssh
// connection, is gone — acts as SIGTERM, so no node outlives the terminal that started it.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddplaunch::fanout {

struct TokenLine {
  std::string token;
  std::string error;  // non-empty: no token, and why
};

// Reads one line (at most 4 KiB, without its newline) from `fd`, byte by byte so that nothing
// after it is consumed; gives up after `timeout`.
TokenLine read_token_line(int fd, std::chrono::milliseconds timeout);

// The variables block that follows the token line. A header line "DDPLAUNCH-ENV <count>
// <bytes>", then exactly <bytes> bytes: NAME NUL VALUE NUL for each variable. No environment
// value can hold a NUL, so every other byte (newlines, quotes, '=', any UTF-8) travels as it
// is; the lengths let the reader take exactly the block and leave the control lines after it.
using Variables = std::vector<std::pair<std::string, std::string>>;
inline constexpr std::size_t kMaxEnvironmentBlockBytes = 4 << 20;

// A variable's name as `env` and the shells take it: letters, digits and _, not starting with a digit.
bool is_variable_name(std::string_view name);
// The block for `variables` (valid names, values without NUL: user_environment checks them).
std::string environment_block(const Variables& variables);

struct ReceivedVariables {
  Variables variables;
  std::string error;  // non-empty: the block was missing or malformed, and how
};
// The payload after the header: `count` variables in exactly `payload`. Pure.
ReceivedVariables parse_environment_payload(std::string_view payload, std::size_t count);
// Reads the header line and the block from `fd` (nothing after it); gives up after `timeout`.
ReceivedVariables read_environment_block(int fd, std::chrono::milliseconds timeout);

// The signal a control line names (SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2); 0 for others.
int control_signal(std::string_view line);

// Watches `fd` (stdin) on a thread of its own: a blocking read that must not hold the event
// loop open once the node has finished. Each signal line is raised in this process (the
// NodeAgent's signal handling takes it from there); a "DEBUG <line>" line (the fan-out's
// terminal typing at the debug console) goes to `on_console_line`, on that thread;
// end-of-file raises SIGTERM.
void watch_stdin_for_stop(int fd, std::function<void(std::string line)> on_console_line);

}  // namespace ddplaunch::fanout
