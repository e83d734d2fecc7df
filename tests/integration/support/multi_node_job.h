// Several real ddplaunch processes as the nodes of one job (own --node-rank, same --master and
// --nodes), on 127.0.0.1 by default: their command lines, and starting node 0 first so that no
// node races the rendezvous server. Every wait is bounded.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "process_runner.h"

namespace ddplaunch::testing {

// What every node of one job shares.
struct MultiNodeJob {
  std::string launcher;  // the ddplaunch binary
  int nodes = 2;
  std::string master_host = "127.0.0.1";
  int port = 0;                    // the rendezvous port on master_host
  std::string job_id{};            // "" gives no --job-id
  std::vector<std::string> flags{};  // for every node, after the ones above
  std::string master() const { return master_host + ":" + std::to_string(port); }
};

// The flags new_loopback_job gives every node first: a bounded join and a quick stop.
inline const std::vector<std::string> kLoopbackJobFlags = {"--join-timeout", "30", "--grace", "1"};

// A job on a free port of 127.0.0.1 with kLoopbackJobFlags, then `flags` (later flags win).
// Records a test failure when no port was free.
MultiNodeJob new_loopback_job(const std::string& launcher, int nodes, const std::string& job_id,
                              const std::vector<std::string>& flags = {});

// `LAUNCHER --nodes N --nproc-per-node P --master HOST:PORT --node-rank R [--job-id ID] FLAGS
// NODE_FLAGS -- PROGRAM`.
std::vector<std::string> node_argv(const MultiNodeJob& job, int node_rank, int nproc,
                                   const std::vector<std::string>& node_flags,
                                   const std::vector<std::string>& program);

// A started node (a failed start is a test failure, and the process then exits at once).
std::unique_ptr<BackgroundProcess> start_node(const std::vector<std::string>& argv);

// True once node 0 says it hosts the rendezvous, i.e. its server listens.
bool wait_listening(const BackgroundProcess& node0,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20));

// Waits for every node in turn, each at most `bound`; one that does not exit is a test failure.
std::vector<RunResult> wait_all(std::vector<std::unique_ptr<BackgroundProcess>>& nodes,
                                std::chrono::milliseconds bound);

// Starts node 0, then (once it listens) the others, and waits for all as wait_all does.
// Empty, with a test failure, when node 0 never listened.
std::vector<RunResult> run_job_nodes(const std::vector<std::vector<std::string>>& argv_by_node,
                                 std::chrono::milliseconds bound);

}  // namespace ddplaunch::testing
