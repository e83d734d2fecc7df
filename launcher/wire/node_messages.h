// What a node tells the master about itself (a worker failed, the node finished or hit a
// problem, its doctor row, its ranks' states) and the master's orders to the nodes (restart,
// stop, end, resume, stand by): records and their codec.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "policy/failure.h"
#include "policy/rank_phase.h"

namespace ddplaunch::messages {

struct NodeFinished { int exit_code = 0; std::string summary; };
struct NodeProblem { std::string message; int exit_code = 1; };
struct NodeReport { bool ok = false; std::string nic; std::string problems; };
// log_dir: where the node writes its ranks' log files ("" without --log-dir), as an absolute path.
struct RankStates { std::string host; std::vector<RankReport> ranks; std::string log_dir; };
struct Restart { std::string reason; };
struct Stop { std::string reason; int exit_code = 1; };
struct JobEnd { int exit_code = 0; };
// run_nonce: the run a spare waits in (etcd: it takes part in that run, as an assigned node does).
struct Standby { std::string reason; std::string run_nonce; };

rendezvous::Message encode(Generation generation, const FailureReport& payload);
rendezvous::Message encode(Generation generation, const NodeFinished& payload);
rendezvous::Message encode(Generation generation, const NodeProblem& payload);
rendezvous::Message encode(Generation generation, const NodeReport& payload);
rendezvous::Message encode(Generation generation, const RankStates& payload);
rendezvous::Message encode(Generation generation, const Restart& payload);
rendezvous::Message encode(Generation generation, const Stop& payload);
rendezvous::Message encode(Generation generation, const JobEnd& payload);
rendezvous::Message encode(Generation generation, const Standby& payload);
rendezvous::Message encode_resume(Generation generation);

std::optional<FailureReport> decode_failure(const rendezvous::Message& message);
std::optional<NodeFinished> decode_node_finished(const rendezvous::Message& message);
std::optional<NodeProblem> decode_node_problem(const rendezvous::Message& message);
std::optional<NodeReport> decode_node_report(const rendezvous::Message& message);
std::optional<RankStates> decode_rank_states(const rendezvous::Message& message);
std::optional<Restart> decode_restart(const rendezvous::Message& message);
std::optional<Stop> decode_stop(const rendezvous::Message& message);
std::optional<JobEnd> decode_job_end(const rendezvous::Message& message);
std::optional<Standby> decode_standby(const rendezvous::Message& message);

}  // namespace ddplaunch::messages
