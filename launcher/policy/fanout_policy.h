// The fan-out's own decisions (--hosts / --hostfile): what follows when one node's ssh
// session ends, when a stop is given up on, and the job's exit status. Pure, like the
// JobPolicy: fanout::FanoutJob reports session ends and carries the answers out. The
// master's JobPolicy still decides the job itself; these rules cover what the master cannot
// (the master's own session ended, or a node failed before it joined).
#pragma once

#include <chrono>
#include <optional>

#include "ddplaunch/base/exit_status.h"

namespace ddplaunch {

// ssh's own failures (cannot connect, connection lost) end it with 255; a signal ends the
// session as badly.
bool ssh_session_failed(const ExitStatus& status);

struct FanoutNodeEnded {
  int node = 0;
  ExitStatus status;
  bool stopping = false;  // a stop was sent to every node already
  int still_running = 0;  // sessions still running after this one
};

struct FanoutEndDecision {
  enum class Say { Nothing, Info, Error };
  Say say = Say::Nothing;                // "node N (host) ended: ..."
  std::optional<int> job_exit_code;      // node 0 ended: its status is the job's
  // The others are stopped after this settle unless they end by themselves first (the
  // master normally ends them at once).
  std::optional<std::chrono::seconds> stop_others_after;
};

FanoutEndDecision decide_fanout_node_end(const FanoutNodeEnded& event);
// The job's exit status: the master's (node 0), or a failure when it has none.
int fanout_exit_code(std::optional<int> master_code);
// How long a stopped node may take past its workers' grace before its ssh is killed.
double fanout_stop_bound_s(double grace_s);

}  // namespace ddplaunch
