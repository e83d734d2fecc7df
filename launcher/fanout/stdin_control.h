// The remote side of a fan-out. The fan-out hands each node's ddplaunch the rendezvous token
// as the first line of its stdin (--token-stdin: never in argv, where ps shows it), then
// keeps that stdin open as its control channel (--stop-on-stdin-eof): a line naming a signal
// ("SIGINT") acts as that signal arriving here, and end-of-file — the fan-out, or its ssh
// connection, is gone — acts as SIGTERM, so no node outlives the terminal that started it.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace ddplaunch::fanout {

struct TokenLine {
  std::string token;
  std::string error;  // non-empty: no token, and why
};

// Reads one line (at most 4 KiB, without its newline) from `fd`, byte by byte so that nothing
// after it is consumed; gives up after `timeout`.
TokenLine read_token_line(int fd, std::chrono::milliseconds timeout);

// The signal a control line names (SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2); 0 for others.
int control_signal(std::string_view line);

// Watches `fd` (stdin) on a thread of its own: a blocking read that must not hold the event
// loop open once the node has finished. Each signal line is raised in this process (the
// NodeAgent's signal handling takes it from there); a "DEBUG <line>" line (the fan-out's
// terminal typing at the debug console) goes to `on_console_line`, on that thread;
// end-of-file raises SIGTERM.
void watch_stdin_for_stop(int fd, std::function<void(std::string line)> on_console_line);

}  // namespace ddplaunch::fanout
