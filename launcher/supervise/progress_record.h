// A worker's training progress: recorded from its shim's step and section reports, and
// reported to the master with its phase and state (the master judges hangs).
#pragma once

#include <sys/types.h>

#include "ddplaunch/contract.h"
#include "supervise/worker.h"

namespace ddplaunch {

// A step or section report; true when the master should hear at once (a section opened or
// closed), false when the periodic report is soon enough (steps).
bool record_progress(Worker& worker, const contract::StatusMessage& message);
// What the node tells the master about one worker: phase, state and progress. Takes the
// worker's recent longest step interval (each interval is reported once).
RankReport rank_report_of(Worker& worker);
// A worker traced by a debugger the launcher did not start (`gdb -p PID`): a person holds it.
// (The launcher's own stack tools are its children, and let go within their deadline.)
bool traced_by_a_person(pid_t pid);

}  // namespace ddplaunch
