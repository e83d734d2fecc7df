// Self test of the integration-test support library: run_command, BackgroundProcess, the
// process probes, and NetnsCluster (real namespaces; skipped unless root with `ip netns`).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "netns_cluster.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

// Output line "<tag>=<pid>" → pid, or -1.
pid_t pid_after(const std::string& output, const std::string& tag) {
  auto pos = output.find(tag + "=");
  if (pos == std::string::npos) return -1;
  return static_cast<pid_t>(std::stol(output.substr(pos + tag.size() + 1)));
}

}  // namespace

TEST(RunCommand, ReportsExitCodeAndMergedOutput) {
  dt::RunResult r = dt::run_command({"sh", "-c", "echo hi; echo err >&2; exit 3"}, seconds(10));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.output, "hi\nerr\n");
  EXPECT_LT(r.seconds, 5.0);
}

TEST(RunCommand, TimeoutKillsTheWholeProcessGroup) {
  dt::RunResult r = dt::run_command({"sh", "-c", "sleep 30 & echo bg=$!; wait"}, milliseconds(300));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_GE(r.seconds, 0.29);
  EXPECT_LT(r.seconds, 3.0);
  pid_t background = pid_after(r.output, "bg");
  ASSERT_GT(background, 0) << "output: " << r.output;
  EXPECT_TRUE(dt::wait_until_gone(background, seconds(2))) << "sleep " << background << " survived";
}

TEST(RunCommand, ReportsTheKillingSignal) {
  dt::RunResult r = dt::run_command({"sh", "-c", "kill -TERM $$"}, seconds(10));
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.term_signal, SIGTERM);
  EXPECT_FALSE(r.timed_out);
}

TEST(RunCommand, AppliesExtraAndUnsetEnvironment) {
  ::setenv("DDPL_SELFTEST_UNSET_ME", "still here", 1);
  dt::RunResult r = dt::run_command({"sh", "-c", "echo \"$DDPL_SELFTEST_FOO:${DDPL_SELFTEST_UNSET_ME-unset}\""},
                                    seconds(10), {{"DDPL_SELFTEST_FOO", "bar"}}, {"DDPL_SELFTEST_UNSET_ME"});
  ::unsetenv("DDPL_SELFTEST_UNSET_ME");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "bar:unset\n");
}

TEST(RunCommand, MissingProgramExits127WithReason) {
  dt::RunResult r = dt::run_command({"/nonexistent/ddpl-no-such-program"}, seconds(10));
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.output.find("ddpl-no-such-program"), std::string::npos) << r.output;
}

TEST(RunCommand, KeepsLargeOutputWhole) {
  dt::RunResult r = dt::run_command({"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a"}, seconds(10));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.size(), 300000u);
  EXPECT_EQ(r.output.find_first_not_of('a'), std::string::npos);
}

TEST(RunCommand, ReturnsWhenAStrayKeepsThePipeOpen) {
  // setsid leaves the group, so the group kill misses it; run_command must still return.
  dt::RunResult r = dt::run_command({"sh", "-c", "setsid sleep 3 & echo stray=$!; exit 0"}, seconds(10));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_LT(r.seconds, 2.0);
  pid_t stray = pid_after(r.output, "stray");
  if (stray > 0) ::kill(stray, SIGKILL);
}

TEST(BackgroundProcess, WaitsForOutputAndSignal) {
  dt::BackgroundProcess p;
  ASSERT_TRUE(p.start({"sh", "-c", "echo ready; exec sleep 30"}));
  EXPECT_TRUE(p.wait_for_output("ready", seconds(5))) << p.output_so_far();
  EXPECT_FALSE(p.wait_for_output("never printed", milliseconds(200)));
  EXPECT_TRUE(dt::process_alive(p.pid()));
  dt::RunResult early = p.wait(milliseconds(100));
  EXPECT_TRUE(early.timed_out);
  EXPECT_TRUE(dt::process_alive(p.pid()));
  EXPECT_TRUE(p.send_signal(SIGTERM));
  dt::RunResult r = p.wait(seconds(5));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGTERM);
  EXPECT_EQ(r.output, "ready\n");
  EXPECT_FALSE(dt::process_alive(p.pid()));
  EXPECT_FALSE(p.send_signal(SIGTERM));
}

TEST(BackgroundProcess, ExitCodeAndEnvironment) {
  dt::BackgroundProcess p;
  ASSERT_TRUE(p.start({"sh", "-c", "echo \"v=$DDPL_SELFTEST_V\"; exit 7"}, {{"DDPL_SELFTEST_V", "42"}}));
  dt::RunResult r = p.wait(seconds(5));
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.output, "v=42\n");
  EXPECT_FALSE(p.start({"true"}));  // one process per object
}

TEST(BackgroundProcess, GroupSignalReachesChildren) {
  dt::BackgroundProcess p;
  ASSERT_TRUE(p.start({"sh", "-c", "sleep 30 & echo bg=$!; wait"}));
  ASSERT_TRUE(p.wait_for_output("bg=", seconds(5)));
  pid_t background = pid_after(p.output_so_far(), "bg");
  ASSERT_GT(background, 0);
  EXPECT_TRUE(p.send_signal_group(SIGKILL));
  EXPECT_TRUE(dt::wait_until_gone(background, seconds(2)));
  EXPECT_EQ(p.wait(seconds(5)).term_signal, SIGKILL);
}

TEST(BackgroundProcess, DestructorKillsTheGroup) {
  pid_t leader = -1, background = -1;
  {
    dt::BackgroundProcess p;
    ASSERT_TRUE(p.start({"sh", "-c", "sleep 30 & echo bg=$!; wait"}));
    ASSERT_TRUE(p.wait_for_output("bg=", seconds(5)));
    leader = p.pid();
    background = pid_after(p.output_so_far(), "bg");
  }
  EXPECT_FALSE(dt::process_alive(leader));
  EXPECT_TRUE(dt::wait_until_gone(background, seconds(2)));
}

TEST(Probes, ProcessAliveAndWaitUntilGone) {
  EXPECT_TRUE(dt::process_alive(::getpid()));
  EXPECT_FALSE(dt::process_alive(-1));
  EXPECT_TRUE(dt::wait_until_gone(-1, milliseconds(10)));
  // A running child is alive and wait_until_gone gives up at its deadline.
  dt::BackgroundProcess p;
  ASSERT_TRUE(p.start({"sleep", "30"}));
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(dt::wait_until_gone(p.pid(), milliseconds(100)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(2));
}

TEST(Probes, FreeTcpPortIsBindable) {
  int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
}

TEST(Probes, TempDirIsNewAndUnique) {
  std::string a = dt::temp_dir("ddpl-selftest-");
  std::string b = dt::temp_dir("ddpl-selftest-");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("/tmp/ddpl-selftest-", 0), 0u) << a;
  struct stat st {};
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  ::rmdir(a.c_str());
  ::rmdir(b.c_str());
}

namespace {

// Listens on 0.0.0.0:PORT, prints "listening", answers every connection with "hello".
const char* kServer = R"(import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(16); print("listening", flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"hello\n"); c.close()
)";

// Connects to ADDR PORT with a 1 s timeout; prints "got hello" or the error class and exits 1.
const char* kClient = R"(import socket, sys
try:
    c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1)
    print("got", c.recv(100).decode().strip())
except Exception as e:
    print("error", type(e).__name__, e); sys.exit(1)
)";

bool namespace_exists(const std::string& ns) {
  dt::RunResult r = dt::run_command({"ip", "netns", "list"}, seconds(10));
  return r.output.find(ns + " ") != std::string::npos || r.output.find(ns + "\n") != std::string::npos;
}

}  // namespace

TEST(NetnsCluster, HostsReachEachOtherAndBlockedPortTimesOut) {
  if (auto reason = dt::NetnsCluster::skip_reason(); !reason.empty()) GTEST_SKIP() << reason;
  const std::string name = dt::NetnsCluster::unique_name("sta");
  {
    dt::NetnsCluster cluster(name, 2);
    EXPECT_EQ(cluster.address(1), "198.18.0.11");
    EXPECT_EQ(cluster.address(2), "198.18.0.12");
    EXPECT_TRUE(namespace_exists(name + "-h1"));
    const std::string port = "29500";
    dt::BackgroundProcess server;
    ASSERT_TRUE(server.start(cluster.exec_argv(1, {"/usr/bin/python3", "-c", kServer, port})));
    ASSERT_TRUE(server.wait_for_output("listening", seconds(10))) << server.output_so_far();

    dt::RunResult ok = dt::run_command(
        cluster.exec_argv(2, {"/usr/bin/python3", "-c", kClient, cluster.address(1), port}), seconds(10));
    EXPECT_EQ(ok.exit_code, 0) << ok.output;
    EXPECT_EQ(ok.output, "got hello\n");

    // The root namespace has no route into the cluster: h1's server is not reachable from here.
    dt::RunResult from_root = dt::run_command(
        {"/usr/bin/python3", "-c", kClient, cluster.address(1), port}, seconds(10));
    EXPECT_NE(from_root.exit_code, 0) << from_root.output;

    cluster.block_port(1, 29500);
    dt::RunResult blocked = dt::run_command(
        cluster.exec_argv(2, {"/usr/bin/python3", "-c", kClient, cluster.address(1), port}), seconds(10));
    EXPECT_EQ(blocked.exit_code, 1) << blocked.output;
    EXPECT_NE(blocked.output.find("timed out"), std::string::npos) << blocked.output;  // dropped, not refused
    EXPECT_GE(blocked.seconds, 0.9);

    cluster.unblock_port(1, 29500);
    dt::RunResult again = dt::run_command(
        cluster.exec_argv(2, {"/usr/bin/python3", "-c", kClient, cluster.address(1), port}), seconds(10));
    EXPECT_EQ(again.output, "got hello\n");

    cluster.set_link(1, false);
    dt::RunResult cut = dt::run_command(
        cluster.exec_argv(2, {"/usr/bin/python3", "-c", kClient, cluster.address(1), port}), seconds(10));
    EXPECT_EQ(cut.exit_code, 1) << cut.output;
    cluster.set_link(1, true);
    dt::RunResult restored = dt::run_command(
        cluster.exec_argv(2, {"/usr/bin/python3", "-c", kClient, cluster.address(1), port}), seconds(10));
    EXPECT_EQ(restored.output, "got hello\n");
    // Leave the server running: the cluster's destructor must kill it.
  }
  EXPECT_FALSE(namespace_exists(name + "-h1"));
  EXPECT_FALSE(namespace_exists(name + "-h2"));
  EXPECT_FALSE(namespace_exists(name + "-br"));
}

TEST(NetnsCluster, SecondNicIsASeparateSubnet) {
  if (auto reason = dt::NetnsCluster::skip_reason(); !reason.empty()) GTEST_SKIP() << reason;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("stb"), 2, true);
  EXPECT_EQ(cluster.second_address(2), "198.18.0.140");
  dt::RunResult addrs = dt::run_command(cluster.exec_argv(2, {"ip", "-4", "-o", "addr", "show"}), seconds(10));
  EXPECT_NE(addrs.output.find("eth0    inet 198.18.0.12/25"), std::string::npos) << addrs.output;
  EXPECT_NE(addrs.output.find("eth1    inet 198.18.0.140/25"), std::string::npos) << addrs.output;

  dt::BackgroundProcess server;
  ASSERT_TRUE(server.start(cluster.exec_argv(1, {"/usr/bin/python3", "-c", kServer, "29501"})));
  ASSERT_TRUE(server.wait_for_output("listening", seconds(10))) << server.output_so_far();
  dt::RunResult via_eth1 = dt::run_command(
      cluster.exec_argv(2, {"/usr/bin/python3", "-c", kClient, cluster.second_address(1), "29501"}), seconds(10));
  EXPECT_EQ(via_eth1.output, "got hello\n");
  // Cutting eth0 leaves the second network working.
  cluster.set_link(1, false);
  dt::RunResult still = dt::run_command(
      cluster.exec_argv(2, {"/usr/bin/python3", "-c", kClient, cluster.second_address(1), "29501"}), seconds(10));
  EXPECT_EQ(still.output, "got hello\n");
}

TEST(NetnsCluster, RejectsBadHostIndex) {
  if (auto reason = dt::NetnsCluster::skip_reason(); !reason.empty()) GTEST_SKIP() << reason;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("stc"), 1);
  EXPECT_THROW(cluster.address(2), std::out_of_range);
  EXPECT_THROW(cluster.second_address(1), std::logic_error);
  EXPECT_THROW(cluster.block_port(1, 70000), std::runtime_error);  // script rejects the port
}
