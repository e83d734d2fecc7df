// The launcher's own stdout and stderr never block it. A terminal nobody reads (`| less` at a
// full screen, Ctrl-S, a `tee` on a hung file system) would otherwise stop the event loop in a
// write(), and with it the heartbeats and the rendezvous: the node would be declared lost and
// the whole job would fail.
//
// Text for fd 1 or 2 goes into one bounded queue (both streams, in order) that a thread of its
// own writes out. A piece of text that does not fit is dropped whole and counted;
// once the stream drains, one line says how much was not shown (the per-rank log files keep
// every line). Any other fd is written at once (tests give their own).
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

namespace ddplaunch {

// Queued for fd 1 and 2 (never blocks); written now for any other fd.
void terminal_write(int fd, std::string_view text);

// What is queued is written out, waiting at most until the streams made no progress for
// `stalled` (a reader that stopped for good): called at the end of the launcher (and at exit).
void terminal_flush(std::chrono::milliseconds stalled = std::chrono::seconds(2));

// How many bytes the queue holds at most before text is dropped.
inline constexpr std::size_t kTerminalQueueBytes = std::size_t{8} << 20;

}  // namespace ddplaunch
