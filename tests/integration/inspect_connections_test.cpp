// `ddplaunch status --watch` and `ddplaunch tail` hold one connection to the job's master for
// the whole job (the watching process's sockets to the master's port, read from /proc until it
// exits, name one local port), and end on the master's typed end: the watch says how the job
// ended and exits with the job's exit status.
#include <gtest/gtest.h>
#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "launcher_test_env.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono_literals;

namespace {

// The socket inodes `pid` holds open.
std::set<std::string> socket_inodes(pid_t pid) {
  std::set<std::string> inodes;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* fds = ::opendir(dir.c_str());
  if (!fds) return inodes;
  while (const dirent* entry = ::readdir(fds)) {
    char target[256];
    const ssize_t n = ::readlink((dir + "/" + entry->d_name).c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    const std::string link(target, static_cast<std::size_t>(n));
    if (link.rfind("socket:[", 0) == 0) inodes.insert(link.substr(8, link.size() - 9));
  }
  ::closedir(fds);
  return inodes;
}

// The local ports of `pid`'s TCP connections to `port` (IPv4 and IPv6), read from /proc/net.
std::set<int> local_ports_to(pid_t pid, int port) {
  std::set<int> ports;
  const std::set<std::string> inodes = socket_inodes(pid);
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (!inodes.count(inode)) continue;
      const int remote_port = std::stoi(remote.substr(remote.find(':') + 1), nullptr, 16);
      if (remote_port == port) ports.insert(std::stoi(local.substr(local.find(':') + 1), nullptr, 16));
    }
  }
  return ports;
}

// Every connection the watcher opens to `port` until it exits (sampled every 20 ms: a
// connection that lives less than that may go unseen, one held for the whole job cannot).
struct ConnectionCount {
  std::set<int> ports;
  void sample_until_exit(const dt::BackgroundProcess& watcher, int port, std::chrono::seconds bound) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (dt::process_alive(watcher.pid()) && std::chrono::steady_clock::now() < deadline) {
      for (int local : local_ports_to(watcher.pid(), port)) ports.insert(local);
      std::this_thread::sleep_for(20ms);
    }
  }
};

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

struct Job {
  int port = dt::free_tcp_port();
  std::string master = "127.0.0.1:" + std::to_string(port);
  dt::BackgroundProcess process;
  // One node, one rank: it prints a line every 100 ms for about 6 s, then exits with `exit_code`.
  bool start(int exit_code) {
    return process.start({DDPLAUNCH_BIN, "--nproc-per-node", "1", "--nodes", "1", "--node-rank", "0", "--master",
                          master, "--history-file", "off", "--", "/bin/sh", "-c",
                          "i=0; while [ $i -lt 60 ]; do echo tick $i; i=$((i+1)); sleep 0.1; done; exit " +
                              std::to_string(exit_code)},
                         {}, dt::kLauncherEnvToUnset);
  }
};

}  // namespace

TEST(InspectConnections, StatusWatchHoldsOneConnectionAndEndsWithTheJobsOutcome) {
  Job job;
  ASSERT_TRUE(job.start(3)) << job.process.output_so_far();
  ASSERT_TRUE(job.process.wait_for_output("tick 5", 60s)) << job.process.output_so_far();
  dt::BackgroundProcess watch;
  ASSERT_TRUE(watch.start({DDPLAUNCH_BIN, "status", "--watch", "--master", job.master}, {}, dt::kLauncherEnvToUnset));
  ConnectionCount connections;
  connections.sample_until_exit(watch, job.port, 60s);
  const dt::RunResult watched = watch.wait(30s);
  const dt::RunResult ran = job.process.wait(60s);
  EXPECT_EQ(ran.exit_code, 3) << ran.output;
  ASSERT_FALSE(watched.timed_out) << watched.output;
  EXPECT_EQ(connections.ports.size(), 1u) << "the watch opened a connection per refresh:\n" << watched.output;
  EXPECT_GE(count_of(watched.output, "\nrank "), 2u) << "redrawn while the job ran:\n" << watched.output;
  EXPECT_NE(watched.output.find("the job has ended: it failed (exit status 3)"), std::string::npos) << watched.output;
  EXPECT_EQ(watched.exit_code, 3) << watched.output;
}

TEST(InspectConnections, StatusWatchOfASucceedingJobSaysSoAndExitsZero) {
  Job job;
  ASSERT_TRUE(job.start(0)) << job.process.output_so_far();
  ASSERT_TRUE(job.process.wait_for_output("tick 5", 60s)) << job.process.output_so_far();
  const dt::RunResult watched =
      dt::run_command({DDPLAUNCH_BIN, "status", "--watch", "--master", job.master}, 60s, {}, dt::kLauncherEnvToUnset);
  const dt::RunResult ran = job.process.wait(60s);
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  ASSERT_FALSE(watched.timed_out) << watched.output;
  EXPECT_NE(watched.output.find("the job has ended: it succeeded"), std::string::npos) << watched.output;
  EXPECT_EQ(watched.exit_code, 0) << watched.output;
}

TEST(InspectConnections, TailHoldsOneConnectionForTheWholeJob) {
  Job job;
  ASSERT_TRUE(job.start(0)) << job.process.output_so_far();
  ASSERT_TRUE(job.process.wait_for_output("tick 5", 60s)) << job.process.output_so_far();
  dt::BackgroundProcess tail;
  ASSERT_TRUE(tail.start({DDPLAUNCH_BIN, "tail", "--rank", "0", "--master", job.master}, {}, dt::kLauncherEnvToUnset));
  ConnectionCount connections;
  connections.sample_until_exit(tail, job.port, 60s);
  const dt::RunResult followed = tail.wait(30s);
  job.process.wait(60s);
  ASSERT_FALSE(followed.timed_out) << followed.output;
  EXPECT_EQ(followed.exit_code, 0) << followed.output;
  EXPECT_EQ(connections.ports.size(), 1u) << followed.output;
  EXPECT_NE(followed.output.find("tick 59"), std::string::npos) << followed.output;
  EXPECT_NE(followed.output.find("the job has ended"), std::string::npos) << followed.output;
}
