// NodeEvent: what a node's parts report up to their node, one type per kind. The parts that
// only report (the GroupSupervisor through group_callbacks_publishing_to, RankFollower,
// RankDebugSessions, PausedRanksPrompt, JoinWatch, EtcdNodeLink) publish them to NodeEvents and never
// call their node; NodeAgent::publish visits every kind in one place, as it visits the
// master's orders (MasterOrder), so a kind without a handler does not compile.
//
// An event is handled before publish returns: it may refer to what its producer holds (a
// worker, a line) for that long, and is never kept.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "debug/pdb_text.h"
#include "policy/failure.h"
#include "policy/node_policy.h"
#include "supervise/group_spec.h"
#include "supervise/worker.h"

namespace ddplaunch {

namespace node_event {

// The workers (GroupSupervisor).
struct WorkerFailed {  // the first failure of a worker
  const WorkerFailure& failure;
};
struct PhasesChanged {};  // a worker moved phase (shim report, exit)
struct RankPaused {       // started stopped (--pause-ranks), waiting for a debugger
  const Worker& worker;
};
struct GroupFinished {  // every worker of the generation reaped
  const GroupOutcome& outcome;
};
struct DebuggerStopped {  // a rank's pdb showed its first prompt; `reason` "" for a breakpoint
  const Worker& worker;
  const debug::StopLocation& where;
  const std::string& reason;
};
struct DebuggerOutput {  // whole lines of a rank's pdb, and whether it prompts again
  const Worker& worker;
  const std::string& lines;
  bool prompt = false;
};
struct DebuggerLeft {  // the rank runs on, or its pdb exited
  const Worker& worker;
};
struct RankPromptShown {  // the rank's own prompt waits for a line, as shown ("" no longer)
  const Worker& worker;
  const std::string& shown;
  bool secret = false;
};
struct FollowedLine {  // a line of a rank `ddplaunch tail` follows
  int rank = -1;
  std::string_view line;
};

// The node's other parts.
struct FollowedRanksChanged {  // RankFollower: the ranks whose lines are wanted now
  std::set<int> ranks;
};
struct GdbHoldChanged {  // RankDebugSessions: gdb took or freed a rank (its state is "debugging" or not)
  const Worker& worker;
  bool attached = false;
};
struct ResumeAsked {};     // PausedRanksPrompt: Enter at the terminal resumes the paused ranks

// The join watch (JoinWatch), while the node has not joined.
struct JoinConnected {};  // connected to the rendezvous: the other nodes are awaited
struct JoinProbed {       // one probe of the master; `interval_s` between probes
  JoinProbe outcome = JoinProbe::Answered;
  std::string message;
  double interval_s = 0;
};

// The etcd link (EtcdNodeLink).
struct CoordinatorStoreChecked {  // registered with etcd (""), or etcd cannot be used
  std::string error;
};
struct Elected {};  // this launcher is elected: it hosts the coordinator from now on
struct CoordinatorNamed {  // join the coordinator etcd names, as connection `serial`
  std::string host;
  int port = 0;
  int serial = 0;
};
struct CoordinatorLeft {};  // the link leaves the coordinator the node is connected to: its client goes
struct CoordinatorLost {  // the connection to the coordinator is gone, or etcd named a newer one
  std::string why;
  std::string address;
};
struct SeatLost {  // this launcher's lease is gone (it stopped coordinating already)
  std::string why;
};
struct CoordinatorWaitOver {  // the wait for a coordinator armed as `serial` has passed
  int serial = 0;
};

}  // namespace node_event

using NodeEvent =
    std::variant<node_event::WorkerFailed, node_event::PhasesChanged, node_event::RankPaused,
                 node_event::GroupFinished, node_event::DebuggerStopped, node_event::DebuggerOutput,
                 node_event::DebuggerLeft, node_event::RankPromptShown, node_event::FollowedLine,
                 node_event::FollowedRanksChanged, node_event::GdbHoldChanged, node_event::ResumeAsked,
                 node_event::JoinConnected, node_event::JoinProbed,
                 node_event::CoordinatorStoreChecked, node_event::Elected, node_event::CoordinatorNamed,
                 node_event::CoordinatorLeft, node_event::CoordinatorLost, node_event::SeatLost,
                 node_event::CoordinatorWaitOver>;

// Where a node's parts publish their events (NodeAgent).
class NodeEvents {
 public:
  virtual void publish(const NodeEvent& event) = 0;

 protected:
  ~NodeEvents() = default;
};

// The GroupSupervisor's callbacks, each publishing its event to `events`.
GroupCallbacks group_callbacks_publishing_to(NodeEvents& events);

}  // namespace ddplaunch
