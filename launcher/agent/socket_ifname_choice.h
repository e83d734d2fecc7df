// Which interface NCCL and gloo use between this node and the others, once the node knows its
// connection to the master: a NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME the user set is checked
// (on a node where NCCL cannot run, a wrong one is only warned about); unset, the interface the
// peer probe found working, else the one the rendezvous connection uses. And the node report
// `ddplaunch --doctor` sends the master, made of the same check.
#pragma once

#include <string>

#include "wire/launcher_messages.h"
#include "agent/node_plan.h"

namespace ddplaunch {

// "" or why the workers cannot start; `selected`: the interface to give the workers, "" to
// leave their choice alone. `local_address`: this node's end of its rendezvous connection.
std::string choose_socket_ifname(const NodePlan& plan, const std::string& local_address,
                                 const std::string& probe_ifname, std::string& selected);

// The doctor's report of this node: the interface check's problems and the interface chosen
// (host, address, GPUs and versions are in the node facts the master already holds).
messages::NodeReport doctor_node_report(const NodePlan& plan, const std::string& local_address);

}  // namespace ddplaunch
