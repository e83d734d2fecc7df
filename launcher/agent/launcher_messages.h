// The launcher's own messages on the rendezvous connection (rendezvous::Message types
// and fields), written and read in one place so both ends agree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "supervise/worker.h"

namespace ddplaunch::messages {

// node → master
inline constexpr const char* kWorkerFailed = "worker_failed";
inline constexpr const char* kNodeFinished = "node_finished";    // all local workers ended
inline constexpr const char* kNodeProblem = "node_problem";      // local check failed / interrupted
inline constexpr const char* kNodeReport = "node_report";        // doctor row
inline constexpr const char* kWorkerStates = "worker_states";    // snapshot for `ddplaunch status`
// master → nodes
inline constexpr const char* kRestart = "restart";               // generation = the new one
inline constexpr const char* kStop = "stop";                     // stop workers, then report finished
inline constexpr const char* kJobEnd = "job_end";                // exit with fields["exit_code"]
inline constexpr const char* kResume = "resume";                 // paused ranks may continue

struct FailureReport {
  WorkerFailure failure;
  std::string host;
};

rendezvous::Message encode_failure(long generation, const WorkerFailure& failure, const std::string& host);
std::optional<FailureReport> decode_failure(const rendezvous::Message& message);

// Worst status of a node's workers: 0 when all succeeded, else the first failing shell code.
rendezvous::Message encode_node_finished(long generation, int exit_code, const std::string& summary);

// One line per worker: "rank pid state" (state: starting, init, running, failed, exited:<code>,
// killed:<signal>, paused).
std::string worker_state_name(const Worker& worker);

rendezvous::Message make_message(const char* type, long generation,
                                 std::vector<std::pair<std::string, std::string>> fields = {});

std::string field(const rendezvous::Message& message, const std::string& key, const std::string& fallback = "");
int int_field(const rendezvous::Message& message, const std::string& key, int fallback);

}  // namespace ddplaunch::messages
