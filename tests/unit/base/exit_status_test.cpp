// ExitStatus: how a real child ended (exit code or signal), classified in one place.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "ddplaunch/base/exit_status.h"

using namespace ddplaunch;

namespace {
int wait_status_of(void (*child)()) {
  pid_t pid = fork();
  if (pid == 0) {
    child();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}
}  // namespace

TEST(ExitStatus, ClassifiesRealChildren) {
  ExitStatus exited = exit_status_from_wait(wait_status_of([] { _exit(7); }));
  EXPECT_FALSE(exited.signaled);
  EXPECT_EQ(exited.shell_code(), 7);
  EXPECT_EQ(exited.describe(), "exit code 7");
  ExitStatus killed = exit_status_from_wait(wait_status_of([] { raise(SIGKILL); }));
  EXPECT_TRUE(killed.signaled);
  EXPECT_EQ(killed.shell_code(), 137);
  EXPECT_EQ(killed.describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_TRUE(exit_status_from_wait(wait_status_of([] { _exit(0); })).success());
}
