// What the master's JobCoordinator (and the parts it composes: the hang watch, the timeline,
// the queries) is built from: the launch configuration and what the node resolved before the
// loop, plus etcd's hooks when the coordinator is elected.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "config/launch_config.h"

namespace ddplaunch {

struct HistorySeed;
struct PolicySettings;

struct CoordinatorSettings {
  LaunchConfig config;
  std::string worker_master_addr;   // the rendezvous host as resolved; every node reached it
  bool master_is_loopback = false;
  std::string worker_bind_address;  // where the port check binds on the master
  bool doctor = false;              // checks only: collect node reports, start no worker
  // The job signature of the run history: this program, on this many nodes, over
  // this interface.
  std::string program_fingerprint;
  std::string socket_ifname;
  // etcd: the coordinator moves between launchers. MASTER_ADDR is then slot 0's
  // address (not the coordinator's), the policy's state goes to `save_state` after each
  // decision (`confirmed`, when given, runs once etcd proved this launcher still leads), and a
  // newly elected coordinator starts from `restored_state` (nullopt: a new job).
  bool elected = false;
  std::function<void(std::string state, std::function<void()> confirmed)> save_state;
  std::optional<std::string> restored_state;
  std::string run_nonce;  // etcd: the run's own id, carried by every assignment
};

// The job policy's settings: the configuration's restart, deadline, membership and hang keys,
// what the node resolved, a random seed, and what past runs of this job taught (`seed`).
PolicySettings policy_settings(const CoordinatorSettings& settings, const HistorySeed& seed);

}  // namespace ddplaunch
