// The worker side of ddplaunch for C++ trainers: read and validate the environment
// contract, and report init progress to the launcher over the status channel.
// Depends only on libc/pthread and contract.h; safe to link into an LD_PRELOAD library.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ddplaunch/contract.h"

namespace ddplaunch::shim {

// Everything a worker needs to join its process group, as the launcher set it.
struct WorkerContract {
  std::string master_addr;
  int master_port = 0;
  int rank = -1;
  int local_rank = -1;
  int world_size = 0;
  int local_world_size = 0;
  int node_rank = 0;
  int node_count = 1;
  contract::GenerationNumber generation = 0;
  double timeout_s = 0;       // DDPLAUNCH_TIMEOUT_S: the launcher's init deadline (information only; never a c10d timeout)
  std::string status_socket;  // empty: no status channel
  std::string job_id;
};

// Either a validated contract, or an error that names each variable at fault with its
// value and says to start the program with ddplaunch or torchrun.
struct ContractResult {
  std::optional<WorkerContract> contract;
  std::string error;
};

// Reads the contract from the process environment. The torchrun variables (MASTER_ADDR,
// MASTER_PORT, RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE) are required; the
// DDPLAUNCH_* ones are optional and fall back to defaults (node rank from GROUP_RANK,
// node count from WORLD_SIZE / LOCAL_WORLD_SIZE, job id from TORCHELASTIC_RUN_ID).
ContractResult read_contract();
// Same, from an explicit map (for tests and for callers that hold their own environment).
ContractResult read_contract(const std::map<std::string, std::string>& env);

// Sends one status datagram to $DDPLAUNCH_STATUS_SOCKET (rank from $RANK, generation from
// $DDPLAUNCH_GENERATION, pid = getpid()). Silently does nothing when the socket variable or
// RANK is unset or invalid, or the socket is gone or full. Never blocks, never throws.
void report(contract::StatusEvent event, std::string_view detail = {}) noexcept;

// Starts a background thread that reports Heartbeat every `interval` (at least 10 ms).
// Idempotent: a second call while running changes nothing. stop_heartbeat() stops and
// joins it; it is also idempotent. The thread never keeps the process alive at exit.
void start_heartbeat(std::chrono::milliseconds interval);
void stop_heartbeat();

// Progress for the launcher's hang detection: call once per training step (after
// the optimizer step). Costs a clock read; reports "step" at most about once a second.
// Thread-safe; never blocks, never throws.
void step() noexcept;

// One completed collective of a process group made by the shim's init_process_group (it
// calls this itself): counted as progress like a step, until the program calls step() — then
// its steps alone are progress, so the learnt step interval stays the time between steps. A
// program without steps of its own (a loop of all_reduce calls) is hang-watched all the same.
void collective_completed() noexcept;
// A collective of that group issued (before it is handed to the backend), and one whose issue
// failed: while any is in flight the rank is waiting inside collectives, and that time goes
// with its step reports (the launcher's straggler watch).
void collective_started() noexcept;
void collective_failed() noexcept;

// A long planned pause (checkpoint, evaluation): reports section_begin now and section_end
// when it goes out of scope, so the launcher applies the section's own deadline instead of
// suspecting a hang. `name` is free text (one word reads best: "checkpoint").
class Section {
 public:
  explicit Section(std::string_view name) noexcept;
  ~Section();
  Section(const Section&) = delete;
  Section& operator=(const Section&) = delete;

 private:
  std::string name_;
};

}  // namespace ddplaunch::shim
