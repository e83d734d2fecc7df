// Every job is authenticated, always, and who may drive a rank's debugger is decided here.
// Whoever can type into a debugger or attach gdb runs code as the launcher's user; whoever can
// ask for a rank's output reads what it printed. So a job given no token makes its own where
// it can (a launcher that is the whole job), and a tokenless job's master makes a token for
// queries only, kept in its owner's private job record (0600 in a 0700 folder): the same
// user's `ddplaunch status|stacks|tail|debug|timeline` on that node proves it unchanged, and
// nobody else can. docs/ARCHITECTURE.md "Who may ask, who may order".
#pragma once

#include <string>

#include "agent/node_plan.h"

namespace ddplaunch {

// Fills plan.config.token (a one-launcher job given none) and plan.query_token, once
// plan.host_server is known. "" or the error (the kernel gave no randomness).
std::string authenticate_job(NodePlan& plan);

// True when this node may carry out its master's orders that run code, type into a rank or
// read what it prints (attach gdb, a line for a rank's debugger, follow a rank's output), and
// relay its ranks' debuggers to it: its master
// proves the job's token at every join, or it is this launcher's own rendezvous server. A node
// of a tokenless job cannot tell its master from a port squatter or a planted etcd key.
bool master_may_reach_ranks(const LaunchConfig& config, bool joins_own_server);

}  // namespace ddplaunch
