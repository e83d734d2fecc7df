// What the JobPolicy decides, as values. The master's shell (JobCoordinator) carries them
// out: logs, timers, rendezvous broadcasts. Nothing here does anything by itself.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch::decision {

enum class Severity { Info, Warn, Error };

struct Log {             // one line (or paragraph) for the master's log
  Severity severity = Severity::Info;
  std::string text;
};
struct PlanGeneration {  // every node joined: start generation G with these values
  Generation generation;
  bool fresh_port = false;   // pick a free worker port (auto, or the old one was at fault)
  double init_deadline_s = 0;      // the group's init deadline
  std::string init_deadline_explained;
};
struct RefuseJob {       // the job cannot start; every node is told why and exits
  std::string reason;
};
struct ScheduleRestart { // wait delay_s, then call JobPolicy::on_backoff_elapsed(generation)
  Generation generation;  // the generation to start
  double delay_s = 0;
};
struct OrderRestart {    // every node: stop workers, rejoin for `generation`
  Generation generation;
  std::string reason;
  // Membership: the generation's nodes, member ids by slot (empty: the same nodes).
  std::vector<int> members;
  // Membership: who held a slot in the last planned generation — they stop workers and must
  // rejoin; the others (spares, new joins) have nothing to stop and count as rejoined at once.
  std::vector<int> ran_workers;
  bool hold = false;     // membership: too few nodes — stop workers, but plan nothing yet
};
struct BeginGeneration { // membership: enough launchers joined — plan generation 0 with these
  Generation generation;
  std::vector<int> members;  // member ids by slot
  std::vector<int> ran_workers;  // as OrderRestart's (none before the first plan)
};
struct TellMember {      // membership: a word to one launcher
  int member_id = -1;
  std::string text;
  bool dismiss = false;  // false: it waits as a hot spare; true: refused / excluded, it exits
};
struct OrderStop {       // every node: stop workers, report finished
  Generation generation;
  int exit_code = 1;
  std::string reason;
};
struct EndJob {          // every node exits with exit_code
  int exit_code = 0;
};
struct AbortJoin {       // nodes are missing at a join/rejoin deadline: tell the joined ones and close
  std::string reason;
};
struct ArmInitDeadline { // call on_init_deadline(generation, serial) after seconds
  Generation generation;
  int serial = 0;
  double seconds = 0;
};
struct PrintTable {      // doctor's table, on stdout
  std::string text;
};
struct StartWorkers {    // the peer probe is done: every node starts generation G's workers
  Generation generation;
  std::string ifname;    // NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME to use ("" = the node's own choice)
};

}  // namespace ddplaunch::decision

namespace ddplaunch {
using Decision = std::variant<decision::Log, decision::PlanGeneration, decision::RefuseJob, decision::ScheduleRestart,
                              decision::OrderRestart, decision::OrderStop, decision::EndJob, decision::AbortJoin,
                              decision::ArmInitDeadline, decision::PrintTable, decision::StartWorkers,
                              decision::BeginGeneration, decision::TellMember>;
}  // namespace ddplaunch
