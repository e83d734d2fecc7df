// Starts worker processes: clone(CLONE_VM | CLONE_VFORK) and exec, with the set-up a worker
// needs (own process group, parent-death signal, clean signals and descriptors, placement).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ddplaunch {

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is searched on PATH when it has no '/'
  std::vector<std::string> env;   // complete environment, "KEY=VALUE"
  bool start_stopped = false;     // stop at the program's first instruction (for gdb -p)
  std::vector<int> cpus;          // CPU affinity (--numa-binding); empty: inherited
  std::vector<int> memory_nodes;  // preferred NUMA nodes for its memory; empty: default policy
  bool stdin_pipe = false;        // stdin is a pipe the caller writes (a fan-out's ssh, a debugger's keyboard), not /dev/null
  bool stdin_inherit = false;     // stdin is the launcher's own (data piped into ddplaunch, as under torchrun)
};

struct SpawnedProcess {
  pid_t pid = -1;                 // also the process-group id: every worker leads its own group
  int stdout_fd = -1;             // read ends, close-on-exec, owned by the caller
  int stderr_fd = -1;
  int stdin_fd = -1;              // write end when stdin_pipe, close-on-exec, owned by the caller
  std::string error;              // non-empty: nothing was started
  int error_number = 0;           // errno behind `error`, when there is one
};

// True for the errno of a spawn that failed for lack of resources (processes, memory,
// descriptors, argument space): transient, unlike a wrong path or permission.
bool is_resource_shortage(int error_number);
// "the system is out of processes or memory (EAGAIN)"; "" when not a resource shortage.
std::string describe_resource_shortage(int error_number);

// The child: own process group, stdin /dev/null (or the pipe asked for), SIGKILL when the launcher dies
// (PR_SET_PDEATHSIG), default signal dispositions, an empty signal mask and no descriptor
// but 0, 1 and 2 (every other one is made close-on-exec in the child before exec); the CPU
// affinity and memory policy of `request` (both survive exec).
SpawnedProcess spawn_worker_process(const SpawnRequest& request);

// A node's workers, one after another as above, with the signal state read and the child's
// stack mapped once for all of them. Result i belongs to request i; the results end at the first that failed (the
// workers after it were not started).
std::vector<SpawnedProcess> spawn_worker_processes(const std::vector<SpawnRequest>& requests);

}  // namespace ddplaunch
