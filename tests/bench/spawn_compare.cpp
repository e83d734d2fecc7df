// Worker spawn, side by side in one process: the launcher's own spawner (clone(CLONE_VM |
// CLONE_VFORK) + exec, supervise/process_spawner.cpp) against Boost.Process v1 (Boost 1.74
// has no v2), each starting a batch of N children with the same set-up a worker gets: own
// process group, PR_SET_PDEATHSIG SIGKILL, default signals, stdin /dev/null, stdout and
// stderr pipes, no other descriptor inherited (bp::limit_handles). Rounds alternate (own,
// Boost fork, Boost vfork, own, ...) so a drift of the machine's speed weighs on all alike;
// each round is timed from the first spawn call to the return of the last one, and to the
// last child reaped. This process is small: in the launcher (a larger address space) fork
// copies more page tables, so Boost's fork path can only be slower there.
//
//   bench_spawn_compare [--children N] [--rounds R] [PROGRAM]   (default 8, 50, /bin/true)
//
// Prints a Markdown table: one row per spawn path, medians and min-max in ms.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/posix.hpp>

#include "supervise/process_spawner.h"

namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

namespace {

struct Round {
  double spawned_ms = 0;  // first spawn call → last spawn call returned
  double reaped_ms = 0;   // first spawn call → last child reaped
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::vector<std::string> environment_strings() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

void reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

Round own_spawner(const std::string& program, int children) {
  std::vector<ddplaunch::SpawnRequest> requests(static_cast<std::size_t>(children));
  const std::vector<std::string> env = environment_strings();
  for (auto& r : requests) {
    r.argv = {program};
    r.env = env;
  }
  Round round;
  const auto start = Clock::now();
  std::vector<ddplaunch::SpawnedProcess> spawned = ddplaunch::spawn_worker_processes(requests);
  round.spawned_ms = ms_since(start);
  for (auto& p : spawned) {
    if (!p.error.empty()) {
      std::fprintf(stderr, "own spawner: %s\n", p.error.c_str());
      std::exit(1);
    }
    close(p.stdout_fd);
    close(p.stderr_fd);
    reap(p.pid);
  }
  round.reaped_ms = ms_since(start);
  return round;
}

// The worker's set-up, in the child before exec (Boost.Process v1's extension point).
struct WorkerSetup {
  template <typename Executor>
  void operator()(Executor&) const {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int sig = 1; sig < NSIG; ++sig) std::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
  }
};

template <typename... Extra>
Round boost_process(const std::string& program, int children, Extra... extra) {
  Round round;
  std::vector<bp::child> spawned;
  std::vector<bp::pipe> outs(static_cast<std::size_t>(children)), errs(static_cast<std::size_t>(children));
  const auto start = Clock::now();
  for (int i = 0; i < children; ++i)
    spawned.emplace_back(bp::exe = program, bp::std_in < bp::null, bp::std_out > outs[static_cast<std::size_t>(i)],
                         bp::std_err > errs[static_cast<std::size_t>(i)], bp::extend::on_exec_setup = WorkerSetup{},
                         bp::limit_handles, extra...);
  round.spawned_ms = ms_since(start);
  for (std::size_t i = 0; i < spawned.size(); ++i) {
    outs[i].close();
    errs[i].close();
    spawned[i].wait();
  }
  round.reaped_ms = ms_since(start);
  return round;
}

std::string figure(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const double median = values[values.size() / 2];
  char text[96];
  std::snprintf(text, sizeof text, "%.2f (%.2f–%.2f)", median, values.front(), values.back());
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  int children = 8, rounds = 50;
  std::string program = "/bin/true";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--children" && i + 1 < argc) children = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else program = arg;
  }
  struct Method {
    const char* name;
    Round (*run)(const std::string&, int);
    std::vector<double> spawned, reaped;
  };
  std::vector<Method> methods = {
      {"own spawner: clone(CLONE_VM + CLONE_VFORK), exec", own_spawner, {}, {}},
      {"Boost.Process v1 bp::child (fork + exec)", [](const std::string& p, int n) { return boost_process(p, n); }, {}, {}},
      {"Boost.Process v1 bp::child + bp::posix::use_vfork",
       [](const std::string& p, int n) { return boost_process(p, n, bp::posix::use_vfork); }, {}, {}},
  };
  for (auto& m : methods) m.run(program, children);  // warm-up: page in both paths
  for (int r = 0; r < rounds; ++r)
    for (auto& m : methods) {
      const Round round = m.run(program, children);
      m.spawned.push_back(round.spawned_ms);
      m.reaped.push_back(round.reaped_ms);
    }
  std::printf("| spawn path | %d × %s: spawn calls returned, median (min–max) ms | all reaped, median (min–max) ms |\n",
              children, program.c_str());
  std::printf("|---|---:|---:|\n");
  for (const auto& m : methods) std::printf("| %s | %s | %s |\n", m.name, figure(m.spawned).c_str(), figure(m.reaped).c_str());
  return 0;
}
