// Preflight validation across hosts (network namespaces, 198.18.0.0/24): every classic multi-node
// misconfiguration ends in seconds with a message naming the value at fault, never in a hang;
// NIC auto-selection follows the route to the master; `ddplaunch doctor` reports each node.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "netns_cluster.h"
#include "output_parsing.h"
#include "launcher_test_env.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono;

namespace {

constexpr int kPort = 29400;  // rendezvous port on host 1 (fresh namespaces: always free)
constexpr auto kBound = seconds(30);  // "finished, not hung" for every failure here

const std::vector<std::string>& kUnsetEnv = ddplaunch::testing::kLauncherEnvToUnset;

std::string describe(const std::vector<dt::RunResult>& results) { return dt::all_output(results, "process"); }

// What one node runs: its host, its flags (after --nodes), extra environment, and the program
// (empty for doctor).
struct NodeSpec {
  int host;
  std::vector<std::string> args;
  std::map<std::string, std::string> env = {};
};

std::vector<std::string> node_args(const std::string& master, int rank, std::vector<std::string> more = {}) {
  std::vector<std::string> a = {"--master", master, "--node-rank", std::to_string(rank)};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// Starts `ddplaunch [doctor] --nodes N --nproc-per-node 1 ARGS [-- PROGRAM]` on each node's host
// at once, waits for all (bounded), and returns the results in the order given.
std::vector<dt::RunResult> run_nodes(const dt::NetnsCluster& cluster, int nodes, const std::vector<NodeSpec>& specs,
                                     const std::vector<std::string>& program, bool doctor = false,
                                     milliseconds timeout = kBound) {
  std::vector<std::unique_ptr<dt::BackgroundProcess>> procs;
  for (const auto& s : specs) {
    std::vector<std::string> argv = {DDPLAUNCH_BIN};
    if (doctor) argv.push_back("doctor");
    for (std::string a : {std::string("--nodes"), std::to_string(nodes), std::string("--nproc-per-node"),
                          std::string("1")})
      argv.push_back(a);
    argv.insert(argv.end(), s.args.begin(), s.args.end());
    if (!program.empty()) {
      argv.push_back("--");
      argv.insert(argv.end(), program.begin(), program.end());
    }
    procs.push_back(std::make_unique<dt::BackgroundProcess>());
    EXPECT_TRUE(procs.back()->start(cluster.exec_argv(s.host, argv), s.env, kUnsetEnv));
  }
  const auto deadline = steady_clock::now() + timeout;
  std::vector<dt::RunResult> results;
  for (auto& p : procs)
    results.push_back(p->wait(std::max(duration_cast<milliseconds>(deadline - steady_clock::now()), milliseconds(1))));
  if (std::getenv("DDPLAUNCH_TEST_VERBOSE")) std::cout << describe(results);
  return results;
}

bool has(const dt::RunResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

// True when one of the launcher's "error:" log lines contains `text`.
bool error_says(const dt::RunResult& r, const std::string& text) {
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (line.find(" error: ") != std::string::npos && line.find(text) != std::string::npos) return true;
  return false;
}

void expect_finished(const std::vector<dt::RunResult>& results) {
  for (const auto& r : results) EXPECT_FALSE(r.timed_out) << "hung:\n" << describe(results);
}

std::string master(const dt::NetnsCluster& cluster, int host = 1) {
  return cluster.address(host) + ":" + std::to_string(kPort);
}

const std::vector<std::string> kPrintEnv = {FAKE_WORKER_BIN, "--print-env"};

// The doctor table's row for `node` ("N host address nic port gpus nccl verdict"), or "".
std::string doctor_row(const std::string& output, int node) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(std::to_string(node) + " ", 0) == 0) return line;
  return "";
}

bool verdict_ok(const std::string& row) { return row.size() >= 3 && row.compare(row.size() - 3, 3, " ok") == 0; }

}  // namespace

TEST(NetnsPreflight, UnreachableMasterAddressFailsInSeconds) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("pwr"), 3);
  const std::string wrong = "198.18.0.99:" + std::to_string(kPort);  // nobody has this address
  const std::vector<std::string> fast = {"--connect-timeout", "1", "--join-timeout", "5"};
  auto results = run_nodes(cluster, 3,
                           {{1, node_args(master(cluster), 0, fast)}, {2, node_args(wrong, 1, fast)},
                            {3, node_args(wrong, 2, fast)}},
                           kPrintEnv);
  expect_finished(results);
  for (int i = 1; i <= 2; ++i) {
    EXPECT_NE(results[i].exit_code, 0) << describe(results);
    EXPECT_TRUE(has(results[i], "198.18.0.99:" + std::to_string(kPort))) << describe(results);
    EXPECT_TRUE(has(results[i], "could not connect to the master")) << describe(results);
    EXPECT_FALSE(has(results[i], "ENV RANK=")) << "a worker started\n" << describe(results);
  }
  EXPECT_NE(results[0].exit_code, 0) << describe(results);
  EXPECT_TRUE(has(results[0], "join timeout")) << describe(results);
}

TEST(NetnsPreflight, UnresolvableMasterIsAConfigurationError) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("pun"), 2);
  auto results = run_nodes(cluster, 2, {{2, node_args("no-such-host.invalid:29400", 1)}}, kPrintEnv);
  expect_finished(results);
  EXPECT_EQ(results[0].exit_code, 2) << describe(results);
  EXPECT_TRUE(has(results[0], "cannot resolve host 'no-such-host.invalid'")) << describe(results);
  EXPECT_FALSE(has(results[0], "ENV RANK=")) << describe(results);
}

TEST(NetnsPreflight, BlackholedRendezvousPortTimesOutNamingTheEndpoint) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("pbl"), 2);
  cluster.block_port(1, kPort);  // SYNs to host 1's rendezvous port vanish: no RST
  const std::vector<std::string> fast = {"--connect-timeout", "1", "--join-timeout", "5"};
  auto results =
      run_nodes(cluster, 2, {{1, node_args(master(cluster), 0, fast)}, {2, node_args(master(cluster), 1, fast)}},
                kPrintEnv);
  expect_finished(results);
  const dt::RunResult& node1 = results[1];
  EXPECT_NE(node1.exit_code, 0) << describe(results);
  EXPECT_LT(node1.seconds, 20.0) << "join timeout is 5 s";
  EXPECT_TRUE(has(node1, master(cluster))) << describe(results);
  EXPECT_TRUE(has(node1, "timed out")) << describe(results);
  EXPECT_FALSE(has(node1, "refused")) << "a blackhole is a timeout, not a refusal\n" << describe(results);
  EXPECT_NE(results[0].exit_code, 0) << describe(results);
}

TEST(NetnsPreflight, LoopbackMasterOnSeveralHostsFailsClearly) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("plo"), 3);
  const std::string loopback = "127.0.0.1:" + std::to_string(kPort);
  // No join timeout on nodes 1 and 2: they must see the mistake themselves, not wait 300 s.
  // Node 0 does wait for them, so it gets a bounded join timeout.
  const std::vector<std::string> probe_fast = {"--connect-timeout", "1"};
  auto results = run_nodes(cluster, 3,
                           {{1, node_args(loopback, 0, {"--join-timeout", "10"})},
                            {2, node_args(loopback, 1, probe_fast)}, {3, node_args(loopback, 2, probe_fast)}},
                           kPrintEnv);
  expect_finished(results);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(results[i].exit_code, 0) << describe(results);
    EXPECT_FALSE(has(results[i], "ENV RANK=")) << describe(results);
  }
  for (int i = 1; i <= 2; ++i) {
    EXPECT_EQ(results[i].exit_code, 2) << describe(results);
    EXPECT_TRUE(error_says(results[i], "127.0.0.1")) << describe(results);
    EXPECT_TRUE(error_says(results[i], "loopback")) << describe(results);
    EXPECT_TRUE(error_says(results[i], "routable address")) << describe(results);
  }
}

TEST(NetnsPreflight, WorkerPortInUseFailsBeforeAnyWorkerStarts) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("ppo"), 3);
  const int taken = 29500;
  dt::BackgroundProcess holder;  // something else already listens on the worker port of host 1
  ASSERT_TRUE(holder.start(cluster.exec_argv(
      1, {"/usr/bin/python3", "-c",
          "import socket,sys,time\ns=socket.socket()\ns.bind(('0.0.0.0'," + std::to_string(taken) +
              "))\ns.listen()\nprint('LISTENING',flush=True)\ntime.sleep(300)"})));
  ASSERT_TRUE(holder.wait_for_output("LISTENING", seconds(30))) << holder.output_so_far();

  const std::vector<std::string> port = {"--worker-port", std::to_string(taken)};
  auto results = run_nodes(cluster, 3,
                           {{1, node_args(master(cluster), 0, port)}, {2, node_args(master(cluster), 1, port)},
                            {3, node_args(master(cluster), 2, port)}},
                           kPrintEnv);
  expect_finished(results);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(results[i].exit_code, 2) << describe(results);
    EXPECT_FALSE(has(results[i], "ENV RANK=")) << "a worker started\n" << describe(results);
  }
  EXPECT_TRUE(has(results[0], "worker port 0.0.0.0:" + std::to_string(taken) + " is already in use"))
      << describe(results);
  EXPECT_TRUE(has(results[0], "--worker-port auto")) << describe(results);
  EXPECT_TRUE(has(results[1], std::to_string(taken))) << "node 1 is not told why\n" << describe(results);
}

// (These nodes have no GPU, so gloo's variable is the one that matters and is checked;
// with GPUs, NCCL_SOCKET_IFNAME is checked the same way.)
TEST(NetnsPreflight, BogusSocketIfnameNamesItAndTheRouteToTheMaster) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("pif"), 3);
  auto results = run_nodes(cluster, 3,
                           {{1, node_args(master(cluster), 0)},
                            {2, node_args(master(cluster), 1), {{"GLOO_SOCKET_IFNAME", "eth9"}}},
                            {3, node_args(master(cluster), 2)}},
                           {FAKE_WORKER_BIN, "--print-env", "--hang"});
  expect_finished(results);
  for (int i = 0; i < 3; ++i) EXPECT_NE(results[i].exit_code, 0) << describe(results);
  EXPECT_EQ(results[1].exit_code, 2) << describe(results);
  EXPECT_FALSE(has(results[1], "ENV RANK=")) << "node 1 started a worker\n" << describe(results);
  // gloo takes exact interface names (NCCL takes prefixes): the error says which rule it checked.
  EXPECT_TRUE(error_says(results[1], "no interface named 'eth9'")) << describe(results);
  // ... and the fix: the interface that routes to the master.
  EXPECT_TRUE(error_says(results[1], "leaves through eth0: set GLOO_SOCKET_IFNAME=eth0")) << describe(results);
  // The master says which node is at fault.
  EXPECT_TRUE(has(results[0], "node 1: GLOO_SOCKET_IFNAME=eth9")) << describe(results);
}

// A gloo job on nodes without GPUs never reads NCCL_SOCKET_IFNAME: a wrong one is a warning
// naming it, not a refused job (both torchrun modes run such a job).
TEST(NetnsPreflight, ABogusNcclSocketIfnameOnANodeWithoutGpusIsAWarning) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("pnw"), 2);
  auto results = run_nodes(cluster, 2,
                           {{1, node_args(master(cluster), 0)},
                            {2, node_args(master(cluster), 1), {{"NCCL_SOCKET_IFNAME", "bogus0"}}}},
                           kPrintEnv);
  expect_finished(results);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(results[i].exit_code, 0) << describe(results);
  EXPECT_TRUE(has(results[1], "NCCL_SOCKET_IFNAME=bogus0")) << describe(results);
  EXPECT_TRUE(has(results[1], "ignored: this node has no GPU")) << describe(results);
  EXPECT_TRUE(has(results[1], "ENV RANK=1")) << "node 1 started no worker\n" << describe(results);
}

TEST(NetnsPreflight, InterfaceFollowsTheMasterAddressWithTwoNics) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("pni"), 3, true);
  for (const auto& [address, nic] : {std::pair{cluster.second_address(1), "eth1"}, {cluster.address(1), "eth0"}}) {
    SCOPED_TRACE("master " + address);
    const std::string m = address + ":" + std::to_string(kPort);
    auto results = run_nodes(cluster, 3, {{1, node_args(m, 0)}, {2, node_args(m, 1)}, {3, node_args(m, 2)}},
                             kPrintEnv);
    expect_finished(results);
    for (int i = 0; i < 3; ++i) {
      const std::string prefix = "[node " + std::to_string(i) + " rank " + std::to_string(i) + "] ENV ";
      EXPECT_EQ(results[i].exit_code, 0) << describe(results);
      EXPECT_TRUE(has(results[i], prefix + "NCCL_SOCKET_IFNAME=" + nic + "\n")) << describe(results);
      EXPECT_TRUE(has(results[i], prefix + "GLOO_SOCKET_IFNAME=" + nic + "\n")) << describe(results);
      EXPECT_TRUE(has(results[i], prefix + "MASTER_ADDR=" + address + "\n")) << describe(results);
    }
  }
}

TEST(NetnsPreflight, DoctorReportsEveryNode) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("pdo"), 3);
  const std::string m = master(cluster);
  auto results = run_nodes(cluster, 3, {{1, node_args(m, 0)}, {2, node_args(m, 1)}, {3, node_args(m, 2)}}, {},
                           /*doctor=*/true);
  expect_finished(results);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << describe(results);
  for (int node = 0; node < 3; ++node) {
    std::string row = doctor_row(results[0].output, node);
    ASSERT_FALSE(row.empty()) << "no row for node " << node << "\n" << results[0].output;
    std::istringstream fields(row);
    std::string rank, host, address, nic;
    fields >> rank >> host >> address >> nic;
    EXPECT_FALSE(host.empty()) << row;
    EXPECT_EQ(address, cluster.address(node + 1)) << row;
    EXPECT_EQ(nic, "eth0") << row;
    EXPECT_TRUE(verdict_ok(row)) << row;
  }
  EXPECT_TRUE(has(results[0], "doctor: the job would start.")) << results[0].output;
  EXPECT_FALSE(has(results[0], "ENV RANK=")) << results[0].output;
}

TEST(NetnsPreflight, DoctorFailsOnBogusSocketIfname) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("pdf"), 3);
  const std::string m = master(cluster);
  auto results = run_nodes(cluster, 3,
                           {{1, node_args(m, 0)}, {2, node_args(m, 1), {{"GLOO_SOCKET_IFNAME", "eth9"}}},
                            {3, node_args(m, 2)}},
                           {}, /*doctor=*/true);
  expect_finished(results);
  for (const auto& r : results) EXPECT_NE(r.exit_code, 0) << describe(results);
  std::string bad = doctor_row(results[0].output, 1);
  EXPECT_NE(bad.find("FAIL"), std::string::npos) << results[0].output;
  EXPECT_NE(bad.find("eth9"), std::string::npos) << results[0].output;
  EXPECT_TRUE(verdict_ok(doctor_row(results[0].output, 0))) << results[0].output;
  EXPECT_TRUE(has(results[0], "doctor: the job would NOT start")) << results[0].output;
}

// ---- peer probe: every node proves its peers, not only the master ------------------------

namespace {

// Runs one nft script inside host's namespace (a fresh table per test: namespaces are new).
void nft(const dt::NetnsCluster& cluster, int host, const std::string& rules) {
  auto r = dt::run_command(cluster.exec_argv(host, {"nft", rules}), seconds(10));
  ASSERT_EQ(r.exit_code, 0) << "nft " << rules << ": " << r.output;
}

// Drops TCP from `source` arriving at `host` (no RST: connects from there time out).
void drop_tcp_from(const dt::NetnsCluster& cluster, int host, const std::string& source) {
  nft(cluster, host, "add table inet probe_test");
  nft(cluster, host, "add chain inet probe_test input { type filter hook input priority 0; }");
  nft(cluster, host, "add rule inet probe_test input ip saddr " + source + " meta l4proto tcp drop");
}

// The link between hosts a and b cut on one NIC, both directions.
void cut_between(const dt::NetnsCluster& cluster, int a, int b, bool second_nic) {
  auto addr = [&](int h) { return second_nic ? cluster.second_address(h) : cluster.address(h); };
  drop_tcp_from(cluster, a, addr(b));
  drop_tcp_from(cluster, b, addr(a));
}

std::vector<NodeSpec> four_nodes(const std::string& master, std::map<std::string, std::string> env = {}) {
  std::vector<NodeSpec> specs;
  for (int i = 0; i < 4; ++i) specs.push_back({i + 1, node_args(master, i), env});
  return specs;
}

}  // namespace

// A firewall between two non-master hosts on eth1 (where the master's address is): the
// probe finds it before any worker starts, every node uses eth0, and the failing pair is named.
TEST(PeerProbe, FirewallBetweenTwoNonMasterHostsOnOneNicChoosesTheOtherAndNamesThePair) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("ppf"), 4, true);
  cut_between(cluster, 3, 4, /*second_nic=*/true);
  const std::string m = cluster.second_address(1) + ":" + std::to_string(kPort);
  auto results = run_nodes(cluster, 4, four_nodes(m), kPrintEnv);
  expect_finished(results);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i].exit_code, 0) << describe(results);
    EXPECT_TRUE(has(results[i], "[node " + std::to_string(i) + " rank " + std::to_string(i) + "] ENV NCCL_SOCKET_IFNAME=eth0\n"))
        << describe(results);
  }
  EXPECT_TRUE(has(results[0], "not used: node 2 (host ")) << results[0].output;
  EXPECT_TRUE(has(results[0], cluster.second_address(3) + ") cannot reach node 3 (host ")) << results[0].output;
  EXPECT_TRUE(has(results[0], cluster.second_address(4) + ":")) << results[0].output;
  EXPECT_TRUE(has(results[0], "over eth1: timed out after 2 s")) << results[0].output;
  EXPECT_TRUE(has(results[0], "peer probe: eth0 connects all 6 probed pair(s) of the 4 nodes")) << results[0].output;
}

// Blocked on both NICs: refused within seconds (exit 2 everywhere), the pair named on each.
TEST(PeerProbe, BlockedOnBothNicsIsRefusedInSecondsNamingThePair) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("ppb"), 4, true);
  cut_between(cluster, 3, 4, false);
  cut_between(cluster, 3, 4, true);
  auto results = run_nodes(cluster, 4, four_nodes(master(cluster)), kPrintEnv);
  expect_finished(results);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 2) << describe(results);
  for (const auto& r : results) EXPECT_FALSE(has(r, "ENV RANK=")) << "a worker started:\n" << describe(results);
  EXPECT_TRUE(error_says(results[0], "peer probe: no network interface connects every pair of neighbouring nodes"))
      << results[0].output;
  EXPECT_TRUE(has(results[0], "node 2 (host ")) << results[0].output;
  EXPECT_TRUE(has(results[0], cluster.address(3) + ") cannot reach node 3 (host ")) << results[0].output;
  EXPECT_TRUE(has(results[0], "over eth0: timed out after 2 s")) << results[0].output;
  EXPECT_TRUE(has(results[0], "over eth1: timed out after 2 s")) << results[0].output;
}

// The user's socket interface (gloo's: these nodes have no GPU) does not connect two peers:
// refused, with the pair and the fix.
TEST(PeerProbe, UsersSocketInterfaceThatDoesNotConnectTwoPeersIsRefusedWithThePair) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("ppu"), 4, true);
  cut_between(cluster, 2, 3, /*second_nic=*/true);
  const std::string m = cluster.second_address(1) + ":" + std::to_string(kPort);
  auto results = run_nodes(cluster, 4, four_nodes(m, {{"GLOO_SOCKET_IFNAME", "eth1"}}), kPrintEnv);
  expect_finished(results);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 2) << describe(results);
  EXPECT_TRUE(error_says(results[0], "over eth1: timed out after 2 s, tried twice (GLOO_SOCKET_IFNAME=eth1); eth0 works: set "
                                     "GLOO_SOCKET_IFNAME=eth0 or unset it"))
      << results[0].output;
  EXPECT_TRUE(error_says(results[0], "node 1 (host ")) << results[0].output;
}

// One ring link rate-limited (nftables `limit rate`): warned as slow, with the figures; the
// job still runs (a slow link is not a broken one).
TEST(PeerProbe, ARateLimitedLinkIsWarnedAsSlowWithFigures) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("ppr"), 3);
  // Host 2 accepts at most ~200 kB/s from host 1, except the rendezvous (source port 29400).
  nft(cluster, 2, "add table inet probe_test");
  nft(cluster, 2, "add chain inet probe_test input { type filter hook input priority 0; }");
  nft(cluster, 2, "add rule inet probe_test input ip saddr " + cluster.address(1) +
                      " tcp sport != 29400 limit rate over 200 kbytes/second drop");
  std::vector<NodeSpec> specs;
  for (int i = 0; i < 3; ++i) specs.push_back({i + 1, node_args(master(cluster), i)});
  auto results = run_nodes(cluster, 3, specs, kPrintEnv);
  expect_finished(results);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << describe(results);
  std::istringstream in(results[0].output);
  std::string warning;
  for (std::string line; std::getline(in, line);)
    if (line.find("slow link: node 0 (host ") != std::string::npos) warning = line;
  ASSERT_FALSE(warning.empty()) << results[0].output;
  EXPECT_NE(warning.find(" -> node 1 (host "), std::string::npos) << warning;
  EXPECT_NE(warning.find("over eth0: "), std::string::npos) << warning;
  EXPECT_NE(warning.find("while the median of the ring's links is "), std::string::npos) << warning;
}

// doctor prints the ring: one row per probed pair and interface, RTT, throughput, verdict.
TEST(PeerProbe, DoctorPrintsTheRingTable) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("ppd"), 3, true);
  std::vector<NodeSpec> specs;
  for (int i = 0; i < 3; ++i) specs.push_back({i + 1, node_args(master(cluster), i)});
  auto results = run_nodes(cluster, 3, specs, {}, /*doctor=*/true);
  expect_finished(results);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << describe(results);
  std::istringstream in(results[0].output);
  int rows = 0, measured = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string from, arrow, to, ifname, rtt, rtt_unit, rate, rate_unit, verdict;
    if (!(words >> from >> arrow >> to >> ifname) || arrow != "->") continue;
    ++rows;
    EXPECT_TRUE(ifname == "eth0" || ifname == "eth1") << line;
    EXPECT_NE(line.find(" ms "), std::string::npos) << line;
    EXPECT_EQ(line.substr(line.size() - 2), "ok") << line;
    if (line.find("bit/s") != std::string::npos) ++measured;
  }
  EXPECT_EQ(rows, 6) << results[0].output;      // 3 pairs x 2 interfaces
  EXPECT_EQ(measured, 6) << results[0].output;  // 3 nodes: every pair is a ring pair
  EXPECT_TRUE(has(results[0], "doctor: the job would start.")) << results[0].output;
}

// NAT between two nodes on eth0 (host 3 rewrites its source towards host 4): the peer sees
// another address than the one host 3 would advertise to NCCL/gloo, so eth0 is not used there.
TEST(PeerProbe, ASourceAddressRewrittenOnTheWayIsDetectedAndTheOtherNicChosen) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("ppn"), 4, true);
  auto added = dt::run_command(cluster.exec_argv(3, {"ip", "addr", "add", "198.18.0.99/25", "dev", "eth0"}), seconds(10));
  ASSERT_EQ(added.exit_code, 0) << added.output;
  nft(cluster, 3, "add table ip probe_nat");
  nft(cluster, 3, "add chain ip probe_nat postrouting { type nat hook postrouting priority 100; }");
  nft(cluster, 3, "add rule ip probe_nat postrouting ip daddr " + cluster.address(4) +
                      " tcp dport != 29400 snat to 198.18.0.99");
  auto results = run_nodes(cluster, 4, four_nodes(master(cluster)), kPrintEnv);
  expect_finished(results);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i].exit_code, 0) << describe(results);
    EXPECT_TRUE(has(results[i], "[node " + std::to_string(i) + " rank " + std::to_string(i) + "] ENV NCCL_SOCKET_IFNAME=eth1\n"))
        << describe(results);
  }
  EXPECT_TRUE(has(results[0], "over eth0: source address rewritten on the way (NAT?): the peer saw 198.18.0.99, not " +
                                  cluster.address(3)))
      << results[0].output;
}
