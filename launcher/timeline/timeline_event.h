// One thing that happened in a job, as a launcher records it for the job's timeline: a lane
// (the job, one node, or one rank on a node) entering a state, or an instant (a failure, a
// restart ordered, a node lost). Times are microseconds on the recording launcher's steady
// clock; the master moves a node's onto its own clock when it gathers them (JobTimeline).
#pragma once

#include <cstdint>
#include <string>

#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch::timeline {

inline constexpr int kJobLane = -1;   // Event::node: the job's own lane (generations, restarts)
inline constexpr int kNodeLane = -1;  // Event::rank: the node's own lane (node lost)

enum class EventType {
  State,    // the lane is in `name` from now until its next State ("exited:1", "ended": it ends there)
  Instant,  // something happened at that moment
  Counter,  // a measured value of the lane from now on (`name`: what, `value`: how much)
};

struct Event {
  std::int64_t at_us = 0;
  Generation generation;
  int node = kJobLane;
  int rank = kNodeLane;
  EventType type = EventType::Instant;
  std::string name;      // the state entered ("init", "running", "exited:1") or what happened
  std::string category;  // instants: failure, restart, stop, job, membership, coordinator, hang, node
  std::string detail;    // for people: the cause, the reason, the figures
  long flow_out = 0;     // a failure: the id of the link to the restart or stop it caused (0: none)
  long flow_in = 0;      // a restart or stop: the failure link it ends (0: none)
  double value = 0;      // a counter's value
};

// A state that ends its lane's slice instead of opening one: a worker's exit, the job's end.
bool ends_lane(const Event& event);

}  // namespace ddplaunch::timeline
