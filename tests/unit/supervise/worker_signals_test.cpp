// Signals to a generation's workers, against real children in their own process groups: the
// stop's SIGTERM, the SIGKILL when the grace ends, and signals forwarded to each worker.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>

#include <boost/asio/io_context.hpp>

#include "worker_test_access.h"
#include "supervise/worker_signals.h"

using namespace ddplaunch;
using namespace std::chrono_literals;

namespace {

// A child in its own process group that waits for signals; `ignore_term`: SIGTERM does nothing.
pid_t start_child(bool ignore_term) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (ignore_term) ::signal(SIGTERM, SIG_IGN);
    for (;;) ::pause();
  }
  ::setpgid(pid, pid);
  return pid;
}

int killed_by(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status)) return 0;
  return WTERMSIG(status);
}

struct Signalled {
  explicit Signalled(bool ignore_term) {
    auto worker = std::make_shared<Worker>(io, 0, 0);
    WorkerTestAccess::set_pid(*worker, start_child(ignore_term));
    workers.push_back(worker);
    ::usleep(50 * 1000);  // the child's handlers are set
  }
  pid_t pid() const { return workers.front()->process.pid(); }

  boost::asio::io_context io;
  WorkerList workers;
  WorkerSignals signals{io, workers};
};

}  // namespace

TEST(WorkerSignals, StopSendsSigtermAndASecondStopWithGraceDoesNothing) {
  Signalled s(false);
  EXPECT_TRUE(s.signals.stop(5s));
  EXPECT_TRUE(s.signals.stopping());
  EXPECT_FALSE(s.signals.stop(5s));
  EXPECT_EQ(killed_by(s.pid()), SIGTERM);
}

TEST(WorkerSignals, SigkillWhenTheGraceEnds) {
  Signalled s(true);
  EXPECT_TRUE(s.signals.stop(100ms));
  s.io.run_for(300ms);
  EXPECT_EQ(killed_by(s.pid()), SIGKILL);
}

TEST(WorkerSignals, ForwardedSignalReachesEachRunningWorker) {
  Signalled s(false);
  EXPECT_EQ(s.signals.forward(SIGUSR1), 1);
  EXPECT_EQ(killed_by(s.pid()), SIGUSR1);
  WorkerTestAccess::set_status(*s.workers.front(), ExitStatus{false, 0, SIGUSR1, true});
  EXPECT_EQ(s.signals.forward(SIGUSR1), 0) << "a reaped worker is not signalled";
  EXPECT_FALSE(s.signals.stopping());
}
