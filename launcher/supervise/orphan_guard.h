// OrphanGuard: a tiny watchdog process started with the launcher. PR_SET_PDEATHSIG only reaches
// a worker itself; when ddplaunch exits or is SIGKILLed the guard sees its pipe close,
// SIGKILLs every worker process group it was told about, sweeps every process carrying
// the job tag (descendants that left the group with setsid/setpgid or double-forked),
// and removes the launcher's temporary directory.
#pragma once

#include <sys/types.h>

#include <string>

namespace ddplaunch {

// ddplaunch's main() hands a start with this first argument to run_guard_sweep(): the guard
// re-runs the launcher's program so to sweep after the launcher died (orphan_guard.cpp).
inline constexpr const char* kGuardSweepArgument = "--orphan-guard-sweep";
int run_guard_sweep(int argc, char** argv);

class OrphanGuard {
 public:
  // After the launcher died, the guard sweeps the job tag and removes the directories:
  // InPlace — a forked copy of this process does it; ByReexec — the guard shares this
  // process's memory (far cheaper to start, where the kernel allows it) and re-runs this
  // program, which must then be ddplaunch (see kGuardSweepArgument).
  enum class Sweep { InPlace, ByReexec };
  // Picks the job tag and starts the guard. Call early, before any thread exists and before
  // any signal handler is installed. Returns "" or an error.
  std::string start(Sweep sweep = Sweep::InPlace);
  void watch(pid_t process_group);    // a worker group was started
  void forget(pid_t process_group);   // that group has been killed and reaped
  // Removed when the launcher is gone (it normally removes it itself; not after SIGKILL).
  void remove_at_exit(const std::string& directory);
  // The launcher swept its descendants itself and will start no more: at its exit the guard
  // skips the environment scan of every process (only a launcher that died needs it).
  void job_swept();
  pid_t pid() const { return guard_pid_; }
  // The value of DDPLAUNCH_JOB_TAG in every worker's environment; "" before start().
  const std::string& job_tag() const { return job_tag_; }

 private:
  void send(char op, const std::string& value);
  int pipe_fd_ = -1;
  pid_t guard_pid_ = -1;
  std::string job_tag_;
};

}  // namespace ddplaunch
