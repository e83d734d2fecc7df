// The rendezvous server's rules for a join, without sockets or clocks: which joins are refused
// and why (worded for the person who started the node), and how the launcher's plan becomes
// one Assignment per node. Server::Impl asks them and carries out the answer.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ddplaunch/rendezvous/server.h"
#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch::rendezvous::join_rules {

// The connections a complete job holds: its nodes, and with membership its spares too.
inline int job_places(const ServerOptions& o) { return o.expected_nodes + (o.launcher_assigns_slots ? o.max_spares : 0); }

// Each returns "" when the join may go on, else the refusal. `who` names the joining node
// ("host 'a' (10.0.0.2)").
std::string launcher_version_refusal(const ServerOptions& o, const NodeFacts& joining, const std::string& who);
std::string node_count_refusal(const ServerOptions& o, const NodeFacts& joining, const std::string& who);
// `admitting`: the server takes joins now (membership: always; otherwise while waiting for them).
std::string no_room_refusal(const ServerOptions& o, bool admitting, int joined, const std::string& who);
// The rank the joining node asks for (-1: any). `holder` describes the live node that holds
// that rank ("host 'b' (10.0.0.3)"), or is empty when the rank is free or was taken back from
// a silent holder.
std::string requested_rank_refusal(const ServerOptions& o, int requested_rank, const std::string& who,
                                   const std::string& holder);

// What the launcher's plan gives each node of the generation, in slot order: a refusal (the
// launcher's own, or the world too large for an int rank) or one Assignment per slot.
// Assignment::nodes is left empty; the node list travels once, beside each assignment.
using Assignments = std::variant<std::string, std::vector<Assignment>>;
Assignments assignments_for(Generation generation, const std::vector<NodeRecord>& slots, const JobPlan& plan);

}  // namespace ddplaunch::rendezvous::join_rules
