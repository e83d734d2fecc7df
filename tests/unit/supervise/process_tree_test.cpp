// The process tree's pieces with real processes and no event loop: the job-tag sweep, the
// subreaper walk (and that it reads nothing outside the tree), descriptors and signal state a
// spawned worker must not inherit, a node's batch of spawns, resource-shortage names.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "ddplaunch/contract.h"
#include "supervise/descendant_sweep.h"
#include "supervise/process_spawner.h"

using namespace ddplaunch;

namespace {

// A child in its own session running `sleep 60` with only `tag_entry` in its environment.
pid_t start_tagged_sleeper(const std::string& tag_entry) {
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    char* argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("60"), nullptr};
    char* envp[] = {const_cast<char*>(tag_entry.c_str()), nullptr};
    execve(argv[0], argv, envp);
    _exit(127);
  }
  return pid;
}

bool contains(const std::vector<pid_t>& pids, pid_t pid) { return std::find(pids.begin(), pids.end(), pid) != pids.end(); }

// Polls (bounded: 250 × 20 ms) until `pid` shows up as a job process; exec takes a moment.
bool found_within_bound(const std::string& tag, pid_t pid) {
  for (int i = 0; i < 250; ++i) {
    if (contains(find_job_processes(tag, {}), pid)) return true;
    usleep(20 * 1000);
  }
  return false;
}

// Reads a child's stdout pipe to its end (bounded by the child's own exit).
std::string read_all(int fd) {
  std::string text;
  char buffer[256];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  return text;
}

}  // namespace

TEST(DescendantSweep, KillsAProcessCarryingTheJobTagOutsideTheGroup) {
  const std::string tag = new_job_tag();
  ASSERT_EQ(tag.size(), 32u);
  pid_t pid = start_tagged_sleeper(std::string(contract::kJobTag) + "=" + tag);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(found_within_bound(tag, pid));
  EXPECT_GE(sweep_job_processes(tag, {}), 1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(DescendantSweep, LeavesProcessesOfAnotherJobAlone) {
  const std::string ours = new_job_tag(), theirs = new_job_tag();
  ASSERT_NE(ours, theirs);
  pid_t pid = start_tagged_sleeper(std::string(contract::kJobTag) + "=" + theirs);
  ASSERT_TRUE(found_within_bound(theirs, pid));
  EXPECT_FALSE(contains(find_job_processes(ours, {}), pid));
  sweep_job_processes(ours, {});
  EXPECT_EQ(kill(pid, 0), 0) << "another job's process was killed";
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// In a child process, so that the test runner itself never becomes a subreaper.
TEST(DescendantSweep, ASubreaperFindsAnUntaggedDoubleForkedOrphan) {
  pid_t helper = fork();
  if (helper == 0) {
    if (!become_subreaper().empty()) _exit(10);
    int fds[2];
    if (pipe(fds) != 0) _exit(11);
    pid_t middle = fork();
    if (middle == 0) {  // double fork: the orphan reparents to the helper, not to init
      pid_t orphan = start_tagged_sleeper("UNRELATED=1");
      (void)!write(fds[1], &orphan, sizeof orphan);
      _exit(0);
    }
    waitpid(middle, nullptr, 0);
    pid_t orphan = -1;
    if (read(fds[0], &orphan, sizeof orphan) != sizeof orphan) _exit(12);
    if (!contains(find_job_processes("", {}), orphan)) _exit(13);
    if (contains(find_job_processes("", {orphan}), orphan)) _exit(14);  // spared
    sweep_job_processes("", {});
    int status = 0;
    if (waitpid(orphan, &status, 0) != orphan || !WIFSIGNALED(status)) _exit(15);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(helper, &status, 0), helper);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 subreaper, 11 pipe, 12 read, 13 not found, 14 not spared, 15 not killed";
}

// The walk a launcher does at each generation's end: its own tree (a chain of three real
// processes), pruning a spared branch, and never a process outside the tree even when that
// one carries the tag (no scan of every process's environment while the tree is there).
TEST(DescendantSweep, ASubreaperWalksOnlyItsOwnTree) {
  const std::string tag = new_job_tag();
  pid_t outsider = start_tagged_sleeper(std::string(contract::kJobTag) + "=" + tag);
  ASSERT_GT(outsider, 0);
  ASSERT_TRUE(found_within_bound(tag, outsider));  // the runner is no subreaper: found by its tag
  pid_t helper = fork();
  if (helper == 0) {
    alarm(20);  // bound on every wait below
    if (!become_subreaper().empty()) _exit(10);
    int b_pipe[2], c_pipe[2];
    if (pipe(b_pipe) != 0 || pipe(c_pipe) != 0) _exit(11);
    auto sleeper_reporting = [&](auto&& in_child) {  // fork; the child runs in_child, then sleeps
      pid_t pid = fork();
      if (pid == 0) {
        in_child();
        char* argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("60"), nullptr};
        execv(argv[0], argv);
        _exit(127);
      }
      return pid;
    };
    pid_t a = sleeper_reporting([&] {  // a → b → c, each reporting its child before it execs
      pid_t b = sleeper_reporting([&] {
        pid_t c = sleeper_reporting([] {});
        (void)!write(c_pipe[1], &c, sizeof c);
      });
      (void)!write(b_pipe[1], &b, sizeof b);
    });
    pid_t b = -1, c = -1;
    if (read(b_pipe[0], &b, sizeof b) != sizeof b || read(c_pipe[0], &c, sizeof c) != sizeof c) _exit(12);
    std::vector<pid_t> all = descendants_of(getpid(), {});
    if (!contains(all, a) || !contains(all, b) || !contains(all, c)) _exit(13);
    std::vector<pid_t> pruned = descendants_of(getpid(), {b});
    if (!contains(pruned, a) || contains(pruned, b) || contains(pruned, c)) _exit(14);
    std::vector<pid_t> job = find_job_processes(tag, {});
    if (contains(job, outsider)) _exit(15);
    if (!contains(job, a) || !contains(job, b) || !contains(job, c)) _exit(16);
    if (sweep_job_processes(tag, {}) < 3) _exit(17);
    for (int reaped = 0; reaped < 3; ++reaped) {  // b and c reparent to this subreaper as they die
      int status = 0;
      pid_t pid = waitpid(-1, &status, 0);
      if (pid <= 0 || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) _exit(18);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(helper, &status, 0), helper);
  EXPECT_EQ(kill(outsider, 0), 0) << "a process outside the subreaper's tree was killed";
  kill(outsider, SIGKILL);
  waitpid(outsider, nullptr, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "helper status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 subreaper, 11 pipe, 12 read, 13 tree incomplete, 14 not pruned, "
                                       "15 outsider found, 16 job incomplete, 17 too few kills, 18 not reaped";
}

TEST(ProcessSpawner, AWorkerInheritsNoDescriptorTheLauncherForgotToMarkCloseOnExec) {
  int leaked = open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaked, 3);
  SpawnRequest request;
  request.argv = {"/bin/sh", "-c", "if [ -e /proc/self/fd/" + std::to_string(leaked) + " ]; then echo LEAKED; else echo CLEAN; fi"};
  request.env = {"PATH=/usr/bin:/bin"};
  SpawnedProcess child = spawn_worker_process(request);
  close(leaked);
  ASSERT_GT(child.pid, 0) << child.error;
  std::string out = read_all(child.stdout_fd);
  close(child.stdout_fd);
  close(child.stderr_fd);
  waitpid(child.pid, nullptr, 0);
  EXPECT_EQ(out, "CLEAN\n");
}

TEST(ProcessSpawner, NamesEachResourceShortage) {
  for (int e : {EAGAIN, ENOMEM, EMFILE, ENFILE, E2BIG}) EXPECT_TRUE(is_resource_shortage(e)) << e;
  for (int e : {ENOENT, EACCES, ENOEXEC, 0}) EXPECT_FALSE(is_resource_shortage(e)) << e;
  EXPECT_NE(describe_resource_shortage(EMFILE).find("out of file descriptors (EMFILE)"), std::string::npos);
  EXPECT_NE(describe_resource_shortage(EAGAIN).find("out of processes"), std::string::npos);
}

// --numa-binding's effects in the child, before exec: the CPU affinity, and memory preferred
// on the given NUMA node (node 0 exists on every Linux machine; numa_maps shows the policy).
TEST(ProcessSpawner, AppliesTheCpuAffinityAndPreferredMemoryNodeBeforeExec) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  int last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &mine)) last = cpu;
  ASSERT_GE(last, 0);
  SpawnRequest request;
  request.argv = {"/bin/sh", "-c",
                  "grep Cpus_allowed_list /proc/self/status; "
                  "if [ -r /proc/self/numa_maps ]; then grep -c prefer:0 /proc/self/numa_maps; else echo no-numa; fi"};
  request.env = {"PATH=/usr/bin:/bin"};
  request.cpus = {last};
  request.memory_nodes = {0};
  SpawnedProcess child = spawn_worker_process(request);
  ASSERT_GT(child.pid, 0) << child.error;
  std::string out = read_all(child.stdout_fd);
  close(child.stdout_fd);
  close(child.stderr_fd);
  int status = 0;
  waitpid(child.pid, &status, 0);
  EXPECT_NE(out.find("Cpus_allowed_list:\t" + std::to_string(last) + "\n"), std::string::npos) << out;
  if (out.find("no-numa") == std::string::npos) {  // a kernel without NUMA has no memory policy to show
    EXPECT_TRUE(std::regex_search(out, std::regex("\n[1-9][0-9]*\n$"))) << "no mapping prefers node 0:\n" << out;
  }
}

// A node's batch: each worker gets result i of request i, starts with no signal blocked and
// with the signals a worker must not inherit ignored (SIGPIPE, SIGTERM, ...) at their default
// (read once for the batch), keeps other ignored signals as POSIX does; the batch ends at the
// first worker that cannot start, and the ones after it are not started.
TEST(ProcessSpawner, ABatchStartsWorkersWithCleanSignalsAndEndsAtTheFirstThatCannotStart) {
  struct sigaction ignore {}, old_pipe {}, old_term {}, old_usr2 {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGPIPE, &ignore, &old_pipe), 0);
  ASSERT_EQ(sigaction(SIGTERM, &ignore, &old_term), 0);
  ASSERT_EQ(sigaction(SIGUSR2, &ignore, &old_usr2), 0);
  sigset_t usr1, old_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(sigprocmask(SIG_BLOCK, &usr1, &old_mask), 0);
  // What this process ignores now (the test's environment may ignore more, e.g. SIGINT under a
  // non-interactive shell): the workers keep all of it but the signals a worker must not
  // inherit ignored.
  unsigned long long ignored = 0;
  for (int sig = 1; sig < 64; ++sig) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) ignored |= 1ULL << (sig - 1);
  }
  EXPECT_TRUE(ignored & (1ULL << (SIGUSR2 - 1)));
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGQUIT}) ignored &= ~(1ULL << (sig - 1));
  auto shows_its_signals = [](int index) {
    SpawnRequest request;
    request.argv = {"/bin/sh", "-c", "echo worker " + std::to_string(index) + "; grep -E '^Sig(Blk|Ign):' /proc/self/status"};
    request.env = {"PATH=/usr/bin:/bin"};
    return request;
  };
  SpawnRequest missing;
  missing.argv = {"/nonexistent/ddplaunch-test-program"};
  std::vector<SpawnedProcess> spawned =
      spawn_worker_processes({shows_its_signals(0), shows_its_signals(1), missing, shows_its_signals(3)});
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGUSR2, &old_usr2, nullptr);

  ASSERT_EQ(spawned.size(), 3U) << "the batch went on after the worker that could not start";
  EXPECT_LT(spawned[2].pid, 0);
  EXPECT_NE(spawned[2].error.find("/nonexistent/ddplaunch-test-program"), std::string::npos) << spawned[2].error;
  const std::string kept_ignored = fmt::format("{:016x}", ignored);
  for (std::size_t i : {0U, 1U}) {
    const SpawnedProcess& worker = spawned[i];
    ASSERT_GT(worker.pid, 0) << worker.error;
    std::string out = read_all(worker.stdout_fd);
    close(worker.stdout_fd);
    close(worker.stderr_fd);
    waitpid(worker.pid, nullptr, 0);
    EXPECT_EQ(out, fmt::format("worker {}\nSigBlk:\t0000000000000000\nSigIgn:\t{}\n", i, kept_ignored));
  }
}
