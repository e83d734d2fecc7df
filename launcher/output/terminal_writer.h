// The launcher's own stdout and stderr never block it. A terminal nobody reads (`| less` at a
// full screen, Ctrl-S, a `tee` on a hung file system) would otherwise stop the event loop in a
// write(), and with it the heartbeats and the rendezvous: the node would be declared lost and
// the whole job would fail.
//
// Text for fd 1 or 2 goes into one bounded queue (both streams, in order) that a thread of its
// own writes out. A piece of text that does not fit is dropped whole and counted; once the
// stream drains, one line says how many lines were not shown (the per-rank log files keep
// every line). Any other fd is written at once (tests give their own).
//
// At the launcher's end, what its reader has not taken yet is not dropped: when the reader
// takes nothing for a while, the rest goes to a small process of its own (forked from the
// writer thread, so it knows to the byte what was written) that writes it after the launcher
// exited, and ends once all is written, the reader is gone, or the reader took nothing for
// 10 minutes. The launcher's exit status does not wait for it. The last lines the launcher
// logs (the job's verdict) have room of their own in the queue, so a queue that workers
// filled never drops them.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

namespace ddplaunch {

// Queued for fd 1 and 2 (never blocks); written now for any other fd.
void terminal_write(int fd, std::string_view text);

// The end of the launcher (also run at exit): waits until what is queued is written, or the
// streams made no progress for `stalled` (30 s at most), then hands the rest to the process
// that writes it after the launcher. Text queued after that is not shown.
void terminal_flush(std::chrono::milliseconds stalled = std::chrono::seconds(2));

// From now on the launcher writes its last lines (the job's verdict): they may use the room
// kept for them beyond kTerminalQueueBytes.
void terminal_begin_last_lines();

// How many bytes the queue holds at most before text is dropped.
inline constexpr std::size_t kTerminalQueueBytes = std::size_t{8} << 20;
// The room beyond it kept for the launcher's last lines.
inline constexpr std::size_t kTerminalLastLinesBytes = std::size_t{64} << 10;

}  // namespace ddplaunch
