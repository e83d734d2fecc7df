// OrphanGuard: a tiny watchdog process forked at start-up. PR_SET_PDEATHSIG only reaches
// a worker itself; when ddplaunch is SIGKILLed the guard sees its pipe close and
// SIGKILLs every worker process group it was told about, grandchildren included.
#pragma once

#include <sys/types.h>

#include <string>

namespace ddplaunch {

class OrphanGuard {
 public:
  // Forks the guard. Call early, before any thread exists. Returns "" or an error.
  std::string start();
  void watch(pid_t process_group);    // a worker group was started
  void forget(pid_t process_group);   // that group has been killed and reaped
  pid_t pid() const { return guard_pid_; }

 private:
  void send(char op, pid_t process_group);
  int pipe_fd_ = -1;
  pid_t guard_pid_ = -1;
};

}  // namespace ddplaunch
