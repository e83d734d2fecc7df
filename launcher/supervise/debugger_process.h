// Which process of a rank waits in its debugger. The debugger's keyboard is the rank's stdin
// pipe, which its children inherit: a DataLoader worker's breakpoint() or ForkedPdb reads it,
// not the rank. The one blocked reading that pipe is the process that stopped, so the console
// names its pid, and `stacks` still reads the rank's own stack when only a child is held.
#pragma once

#include <sys/types.h>

namespace ddplaunch {

// The process among `rank_pid` and its descendants that is blocked reading the pipe whose
// write end this launcher holds as `pipe_write_fd`; `rank_pid` when none is seen (it may not
// have reached its read yet: looked for a few milliseconds, bounded).
pid_t process_in_debugger(pid_t rank_pid, int pipe_write_fd);

}  // namespace ddplaunch
