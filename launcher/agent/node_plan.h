// NodePlan: what this node runs, resolved once before the event loop starts — where the
// master is, this node's GPUs and workers, the workers' environment and placement, the join
// facts, where the debug console is, and whether this node hosts the rendezvous — and the two
// steps main takes to make it. A step returns the error main reports before it exits
// (kExitConfigError); notes and warnings are logged where they are found.
#pragma once

#include <string>
#include <vector>

#include "master/debug_relay.h"
#include "config/command_line.h"
#include "config/launch_config.h"
#include "ddplaunch/base/result.h"
#include "ddplaunch/preflight/gpus.h"
#include "ddplaunch/rendezvous/types.h"
#include "env/worker_environment.h"
#include "placement/cpu_placement.h"

namespace ddplaunch {

struct NodePlan {                 // what main resolved before the event loop starts
  LaunchConfig config;
  std::string master_host;        // rendezvous host as given
  std::string master_ip;          // resolved (the first address)
  std::vector<std::string> master_addresses;  // every address master_host resolves to
  std::vector<std::string> rendezvous_bind;   // where the server listens (host_server only)
  int rendezvous_port = 0;        // 0 with --standalone: any free port
  bool host_server = false;       // this node runs the rendezvous server (node rank 0)
  bool host_chosen_by_address = false;  // no --node-rank: hosting because the master address is ours
  int nproc = 1;
  int gpu_count = 0;
  bool nccl_may_run = false;  // GPUs found, or a driver present and not probed: NCCL_SOCKET_IFNAME matters
  std::string hostname;
  Environment base_env;           // launcher environment + shim additions
  rendezvous::NodeFacts facts;
  bool doctor = false;
  std::vector<placement::WorkerPlacement> placement;  // by local rank (--numa-binding); empty: none
  // Interactive debugging: where the job's debug console is shown when this node is the
  // master, and whether the workers share ddplaunch's stdin (data was piped into it) instead
  // of each having its debugger's keyboard.
  ConsolePlace console_place = ConsolePlace::None;
  bool inherit_stdin = false;
  bool record_token = false;  // the token was made by ddplaunch (fan-out, ddplaunch-srun, one-launcher job): kept in the job record
  // What a status query must prove here: the job's token, or on a tokenless job's master one
  // of its own, kept in its job record (job_authentication.h). "" on a tokenless job's node.
  std::string query_token;
  // A one-launcher job: what its own node proves itself with to its own rendezvous server
  // instead of the token (rendezvous::ServerOptions::own_node_secret), never written anywhere.
  std::string own_node_secret;
};

// A node's plan and the GPUs it was made from (--dry-run shows them).
struct PlannedNode {
  NodePlan plan;
  preflight::GpuInfo gpus;
};

// Local preflight: the master resolves (with etcd: this launcher's own address on its route to
// etcd), the GPUs fit nproc; the workers' environment and placement, the join facts, the
// debug console's place. `env`: ddplaunch's environment, secrets still in it.
Result<PlannedNode> plan_node(const LaunchConfig& config, const CommandLine& cl, const Environment& env);

// What running the plan needs beyond --dry-run: a program that can start (not for doctor), a
// log directory for -r/-t without --log-dir, and where the rendezvous server listens when
// this node hosts it. "" or the error.
std::string ready_node_to_run(NodePlan& plan);

}  // namespace ddplaunch
