// The workers' contract for one generation (env/worker_environment.h's NodeAssignment): the
// master's assignment of this node (rendezvous::Assignment), with what only this node knows —
// its worker count, role, job id, the status socket its shims report on, the socket interface
// the peer probe chose and the launchers' rendezvous port. The one place the one becomes the
// other: the node agent at each generation, --dry-run for the generation it shows.
#pragma once

#include <string>

#include "agent/node_plan.h"
#include "ddplaunch/rendezvous/types.h"
#include "env/worker_environment.h"

namespace ddplaunch {

// `rendezvous_port`: 0 when not given (no DDPLAUNCH_RENDEZVOUS_PORT).
NodeAssignment node_assignment(const rendezvous::Assignment& assignment, const NodePlan& plan,
                               const std::string& status_socket, const std::string& socket_ifname,
                               int rendezvous_port);

}  // namespace ddplaunch
