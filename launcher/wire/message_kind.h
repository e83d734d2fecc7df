// The kinds of the launcher's own messages on the rendezvous connection, and their names there:
// one enum, so that nothing compares type strings anywhere else.
#pragma once

#include <optional>
#include <string_view>

#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch::messages {

enum class Kind {
  // node → master
  WorkerFailed,  // FailureReport
  NodeFinished,  // all local workers ended (or none left to stop)
  NodeProblem,   // a local check failed, or the node was interrupted
  NodeReport,    // doctor's row
  RankStates,    // every local rank's phase (on each change, and every few seconds)
  ProbeResults,  // the node's peer probes: one line per link
  TimelineEvents,  // its ranks' state changes for the job's timeline, on the node's clock
  RankOutput,    // the lines of a followed rank (`ddplaunch tail`), batched
  // master → nodes
  Restart,       // generation = the new one
  Stop,          // stop workers, then report finished
  JobEnd,        // exit with exit_code
  Resume,        // paused ranks may continue
  ProbeVerdict,  // peer probe done: start workers, with this socket interface ("" = as before)
  Standby,       // to one launcher: it is a hot spare; wait idle for a slot
  OutputFilter,  // the terminal shows only these global ranks' lines from now on (none listed: all)
  FollowRank,    // the node of that rank sends its lines for `seconds` (renewed while someone follows)
  // Stacks on demand (either direction)
  CollectStacks,  // master → nodes: take your ranks' stacks for round `request`
  RankStacks,     // node → master: the stacks of its ranks for round `request`
  // Interactive debugging: a rank's debugger, relayed between its node and the master's console.
  DebugStopped,   // node → master: a rank stopped in its debugger
  DebugOutput,    // node → master: its debugger's output, and whether it prompts again
  DebugResumed,   // node → master: it left the debugger (continued, or exited)
  DebugInput,     // master → node: a line for that rank's debugger
  DebugAttachGdb, // master → nodes: the node of that rank attaches gdb to it
};

std::string_view kind_name(Kind kind);
std::optional<Kind> kind_of(const rendezvous::Message& message);

}  // namespace ddplaunch::messages
