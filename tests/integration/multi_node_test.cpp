// Several real ddplaunch processes as separate nodes on 127.0.0.1 (own --node-rank, same --master
// and --nodes) running fake_worker: environment across nodes, join progress and timeout, refusals,
// garbage on the rendezvous port, group completion, a node killed mid-run, and `ddplaunch status`.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "multi_node_job.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::testing::all_output;
using ddplaunch::testing::BackgroundProcess;
using ddplaunch::testing::count_of;
using ddplaunch::testing::MultiNodeJob;
using ddplaunch::testing::RunResult;
using ddplaunch::testing::start_node;
using ddplaunch::testing::wait_all;
using ddplaunch::testing::wait_listening;

constexpr auto kJobBound = 60s;  // "finished, not hung": generous for a busy 2-core machine

MultiNodeJob new_job(int nodes, const std::string& job_id, const std::vector<std::string>& flags = {}) {
  return ddplaunch::testing::new_loopback_job(DDPLAUNCH_BIN, nodes, job_id, flags);
}

// One node of the job running fake_worker with `worker_args`.
std::vector<std::string> fake_worker_node(const MultiNodeJob& job, int node_rank, int nproc,
                                          const std::vector<std::string>& node_flags,
                                          const std::vector<std::string>& worker_args) {
  std::vector<std::string> program{FAKE_WORKER_BIN};
  program.insert(program.end(), worker_args.begin(), worker_args.end());
  return ddplaunch::testing::node_argv(job, node_rank, nproc, node_flags, program);
}

// "[node N rank R] ENV NAME=value" → env[(N, R)][NAME] = value.
using EnvByRank = std::map<std::pair<int, int>, std::map<std::string, std::string>>;
void collect_env(const std::string& output, EnvByRank& env, int& lines_seen) {
  for (const auto& line : ddplaunch::testing::env_lines(output)) {
    if (line.node < 0 || !line.value) continue;
    ++lines_seen;
    env[{line.node, line.rank}][line.name] = *line.value;
  }
}

std::vector<pid_t> worker_pids(const std::string& output) {
  static const std::regex pid(R"(FAKE_WORKER_PID=(\d+))");
  std::vector<pid_t> pids;
  for (std::sregex_iterator it(output.begin(), output.end(), pid), end; it != end; ++it)
    pids.push_back(static_cast<pid_t>(std::stol((*it)[1])));
  return pids;
}

// Runs a job of nodes with the given nproc each, all printing their env; checks the contract.
void check_environment_across_nodes(const std::vector<int>& nprocs, const std::string& job_id) {
  MultiNodeJob job = new_job(static_cast<int>(nprocs.size()), job_id);
  std::vector<std::vector<std::string>> argv_by_node;
  for (int r = 0; r < job.nodes; ++r) argv_by_node.push_back(fake_worker_node(job, r, nprocs[r], {}, {"--print-env"}));
  auto results = ddplaunch::testing::run_job_nodes(argv_by_node, kJobBound);
  ASSERT_EQ(results.size(), nprocs.size()) << "node 0 never listened";
  const std::string everything = all_output(results);
  for (int r = 0; r < job.nodes; ++r) EXPECT_EQ(results[r].exit_code, 0) << "node " << r << "\n" << everything;

  int world = 0;
  std::vector<int> offset;
  for (int n : nprocs) offset.push_back(world), world += n;

  EnvByRank env;
  for (int r = 0; r < job.nodes; ++r) {
    EnvByRank mine;
    int lines = 0;
    collect_env(results[r].output, mine, lines);
    EXPECT_GT(lines, 0) << "node " << r << " printed no ENV lines:\n" << results[r].output;
    for (auto& [key, vars] : mine) {
      EXPECT_EQ(key.first, r) << "node " << r << "'s output carries a line of node " << key.first;
      env[key] = vars;
    }
  }
  std::set<int> ranks;
  std::string master_addr, master_port;
  for (auto& [key, vars] : env) {
    auto [node, prefix_rank] = key;
    SCOPED_TRACE("node " + std::to_string(node) + " rank " + std::to_string(prefix_rank));
    ASSERT_TRUE(vars.count("RANK") && vars.count("LOCAL_RANK") && vars.count("MASTER_ADDR") &&
                vars.count("MASTER_PORT"))
        << everything;
    int rank = std::stoi(vars["RANK"]);
    int local = std::stoi(vars["LOCAL_RANK"]);
    EXPECT_EQ(rank, prefix_rank);
    EXPECT_TRUE(ranks.insert(rank).second) << "rank " << rank << " twice";
    EXPECT_EQ(vars["WORLD_SIZE"], std::to_string(world));
    EXPECT_EQ(vars["GROUP_RANK"], std::to_string(node));
    EXPECT_EQ(vars["LOCAL_WORLD_SIZE"], std::to_string(nprocs[node]));
    EXPECT_EQ(rank, offset[node] + local);
    EXPECT_GE(local, 0);
    EXPECT_LT(local, nprocs[node]);
    if (master_addr.empty()) master_addr = vars["MASTER_ADDR"], master_port = vars["MASTER_PORT"];
    EXPECT_EQ(vars["MASTER_ADDR"], master_addr);
    EXPECT_EQ(vars["MASTER_PORT"], master_port);
  }
  EXPECT_EQ(static_cast<int>(ranks.size()), world) << everything;
  if (!ranks.empty()) {
    EXPECT_EQ(*ranks.begin(), 0);
    EXPECT_EQ(*ranks.rbegin(), world - 1);
  }
  EXPECT_FALSE(master_port.empty());
  EXPECT_NE(master_port, "0");
}

TEST(MultiNode, TwoNodesTwoWorkersGetAConsistentEnvironment) {
  check_environment_across_nodes({2, 2}, "it2-env-2x2");
}

TEST(MultiNode, FourNodesWithDifferentNprocGetConsistentRanks) {
  check_environment_across_nodes({1, 2, 1, 3}, "it2-env-hetero");
}

TEST(MultiNode, JoinProgressAndTimeoutNameTheMissingNode) {
  MultiNodeJob job = new_job(3, "it2-join-timeout", {"--join-timeout", "3"});
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  auto started = std::chrono::steady_clock::now();
  nodes.push_back(start_node(fake_worker_node(job, 0, 1, {}, {})));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 1, {}, {})));
  auto results = wait_all(nodes, 30s);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string everything = all_output(results);

  EXPECT_TRUE(results[0].output.find("waiting for nodes: 2/3 joined") != std::string::npos ||
              results[0].output.find("waiting for nodes: 1/3 joined") != std::string::npos)
      << everything;
  // The timeout message names the one node that never came.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(results[0].output, m, std::regex(R"(join timeout[^\n]*missing ([^\n]*))")))
      << everything;
  EXPECT_NE(m[1].str().find("node rank 2"), std::string::npos) << "missing list does not name node rank 2: " << m[1];
  EXPECT_EQ(m[1].str().find("node rank 1"), std::string::npos) << "node 1 joined but is named missing: " << m[1];
  for (std::size_t i = 0; i < results.size(); ++i) EXPECT_NE(results[i].exit_code, 0) << "node " << i << everything;
  EXPECT_LT(seconds, 15.0) << "join timeout of 3 s took " << seconds << " s to end the job\n" << everything;
}

// Node 0 runs a 2-node job alone with a short join timeout; a node with `bad_flags` is refused.
void check_refused(const std::vector<std::string>& node0_flags, const std::vector<std::string>& bad_flags,
                   const std::string& job_id, const std::vector<std::string>& expected_words) {
  MultiNodeJob job = new_job(2, job_id);
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  std::vector<std::string> flags0 = node0_flags;
  flags0.insert(flags0.end(), {"--join-timeout", "6"});
  nodes.push_back(start_node(fake_worker_node(job, 0, 1, flags0, {})));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 1, bad_flags, {})));
  auto results = wait_all(nodes, 30s);
  const std::string everything = all_output(results);
  EXPECT_NE(results[1].exit_code, 0) << everything;
  EXPECT_NE(results[1].output.find("refused"), std::string::npos) << everything;
  for (const auto& word : expected_words)
    EXPECT_NE(results[1].output.find(word), std::string::npos) << "refused node should mention '" << word << "'\n"
                                                                << everything;
  EXPECT_EQ(results[1].output.find("FAKE_WORKER_PID"), std::string::npos) << "a refused node started workers\n"
                                                                          << everything;
  EXPECT_NE(results[0].exit_code, 0) << "node 0 should give up at its join timeout\n" << everything;
}

TEST(MultiNode, WrongJobIdIsRefusedOnThatNode) {
  check_refused({}, {"--job-id", "some-other-job"}, "it2-right-job", {"job id", "some-other-job"});
}

TEST(MultiNode, BadTokenIsRefusedOnThatNode) {
  check_refused({"--token", "secret-of-node-0"}, {"--token", "another-secret"}, "it2-token", {"token"});
}

TEST(MultiNode, DuplicateNodeRankIsRefused) {
  MultiNodeJob job = new_job(3, "it2-duplicate", {"--join-timeout", "6"});
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  nodes.push_back(start_node(fake_worker_node(job, 0, 1, {}, {})));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 1, {}, {})));
  ASSERT_TRUE(nodes[0]->wait_for_output("waiting for nodes: 2/3", 20s)) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 1, {}, {})));  // rank 1 again
  auto results = wait_all(nodes, 30s);
  const std::string everything = all_output(results);
  EXPECT_NE(results[2].exit_code, 0) << everything;
  EXPECT_NE(results[2].output.find("duplicate node rank 1"), std::string::npos) << everything;
  for (std::size_t i = 0; i < results.size(); ++i) EXPECT_NE(results[i].exit_code, 0) << "node " << i << everything;
}

TEST(MultiNode, ANodeTooManyIsRefusedAndTheJobGoesOn) {
  MultiNodeJob job = new_job(2, "it2-too-many");
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  const std::vector<std::string> worker{"--report-init", "--sleep-ms", "3000"};
  nodes.push_back(start_node(fake_worker_node(job, 0, 1, {}, worker)));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 1, {}, worker)));
  ASSERT_TRUE(nodes[1]->wait_for_output("FAKE_WORKER_PID", 20s)) << nodes[1]->output_so_far();
  auto third = start_node(fake_worker_node(job, 1, 1, {}, worker));  // a third node for a 2-node job
  RunResult refused = third->wait(30s);
  auto results = wait_all(nodes, kJobBound);
  const std::string everything = all_output(results) + "===== third node\n" + refused.output;
  ASSERT_FALSE(refused.timed_out) << everything;
  EXPECT_NE(refused.exit_code, 0) << everything;
  EXPECT_NE(refused.output.find("too many nodes"), std::string::npos) << everything;
  EXPECT_EQ(results[0].exit_code, 0) << everything;
  EXPECT_EQ(results[1].exit_code, 0) << everything;
}

// A TCP connection to 127.0.0.1:port; -1 on failure. Closed by the caller.
int connect_raw(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

TEST(MultiNode, GarbageAndHalfOpenConnectionsDoNotDisturbTheRendezvous) {
  std::signal(SIGPIPE, SIG_IGN);  // the server may drop us mid-write
  MultiNodeJob job = new_job(2, "it2-garbage");
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  nodes.push_back(start_node(fake_worker_node(job, 0, 2, {}, {"--report-init"})));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();

  FdCloser silent{connect_raw(job.port)};  // half-open: connects, never says anything
  FdCloser noisy{connect_raw(job.port)};
  ASSERT_GE(silent.fd, 0);
  ASSERT_GE(noisy.fd, 0);
  std::mt19937 rng(12345);
  std::string garbage(8192, '\0');
  for (auto& ch : garbage) ch = static_cast<char>(rng());
  garbage.replace(0, 4, "\xff\xff\xff\x7f");  // an absurd length prefix first
  (void)!::send(noisy.fd, garbage.data(), garbage.size(), MSG_NOSIGNAL);

  nodes.push_back(start_node(fake_worker_node(job, 1, 2, {}, {"--report-init"})));
  FdCloser late{connect_raw(job.port)};  // more garbage while node 1 joins
  if (late.fd >= 0) (void)!::send(late.fd, garbage.data() + 100, 1000, MSG_NOSIGNAL);

  auto results = wait_all(nodes, kJobBound);
  const std::string everything = all_output(results);
  EXPECT_EQ(results[0].exit_code, 0) << everything;
  EXPECT_EQ(results[1].exit_code, 0) << everything;
  EXPECT_EQ(count_of(everything, "] FAKE_WORKER_PID="), 4) << everything;
}

TEST(MultiNode, AWorkerFailureOnNode1EndsEveryNodeWithItsCode) {
  MultiNodeJob job = new_job(2, "it2-group-exit");
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  nodes.push_back(start_node(fake_worker_node(job, 0, 2, {}, {"--report-init", "--sleep-ms", "300"})));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 2, {}, {"--report-init", "--sleep-ms", "300", "--exit", "5"})));
  auto results = wait_all(nodes, kJobBound);
  const std::string everything = all_output(results);
  EXPECT_EQ(results[0].exit_code, 5) << everything;
  EXPECT_EQ(results[1].exit_code, 5) << everything;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(results[0].output, m, std::regex(R"(JOB FAILED — root cause: rank (\d+) [^\n]* on node (\d+))")))
      << everything;
  EXPECT_EQ(m[2].str(), "1") << everything;
  int rank = std::stoi(m[1]);
  EXPECT_TRUE(rank == 2 || rank == 3) << "root cause rank " << rank << " is not on node 1\n" << everything;
  EXPECT_NE(results[0].output.find("during runtime"), std::string::npos) << everything;
}

TEST(MultiNode, ANodeKilledMidRunStopsTheOthersAndLeavesNoWorker) {
  MultiNodeJob job = new_job(2, "it2-node-lost", {"--heartbeat-interval", "0.2", "--heartbeat-timeout", "2", "--grace", "1"});
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  nodes.push_back(start_node(fake_worker_node(job, 0, 2, {}, {"--report-init", "--hang"})));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 2, {}, {"--report-init", "--hang"})));

  // Both nodes' workers are up: collect their pids.
  auto both_up = [&](int node) {
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (worker_pids(nodes[node]->output_so_far()).size() >= 2) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  };
  ASSERT_TRUE(both_up(0)) << nodes[0]->output_so_far();
  ASSERT_TRUE(both_up(1)) << nodes[1]->output_so_far();
  auto pids0 = worker_pids(nodes[0]->output_so_far());
  auto pids1 = worker_pids(nodes[1]->output_so_far());

  auto killed_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(nodes[1]->send_signal(SIGKILL));
  RunResult lost = nodes[1]->wait(10s);
  ASSERT_FALSE(lost.timed_out);
  EXPECT_EQ(lost.term_signal, SIGKILL);

  // heartbeat timeout 2 s + grace 1 s + a wide margin for a busy machine.
  RunResult r0 = nodes[0]->wait(30s);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  const std::string everything = "===== node 0\n" + r0.output + "===== node 1 (killed)\n" + lost.output;
  ASSERT_FALSE(r0.timed_out) << everything;
  EXPECT_NE(r0.exit_code, 0) << everything;
  EXPECT_TRUE(std::regex_search(r0.output, std::regex(R"(node 1 [^\n]*was lost)"))) << everything;
  EXPECT_LT(seconds, 2 + 1 + 12.0) << "node 0 took " << seconds << " s to give up on node 1\n" << everything;
  for (pid_t pid : pids0)
    EXPECT_TRUE(ddplaunch::testing::wait_until_gone(pid, 5s)) << "node 0's worker " << pid << " survived";
  // Node 1's own workers: its orphan guard must take them down although ddplaunch got SIGKILL.
  for (pid_t pid : pids1)
    EXPECT_TRUE(ddplaunch::testing::wait_until_gone(pid, 10s)) << "node 1's worker " << pid << " survived";
  for (pid_t pid : pids1)
    if (ddplaunch::testing::process_alive(pid)) ::kill(pid, SIGKILL);  // leave nothing behind either way
}

// The master (node 0) killed: node 1 must notice, stop its workers and exit by itself.
TEST(MultiNode, TheMasterKilledMidRunEndsTheOtherNode) {
  MultiNodeJob job = new_job(2, "it2-master-lost", {"--heartbeat-interval", "0.2", "--heartbeat-timeout", "2", "--grace", "1"});
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  nodes.push_back(start_node(fake_worker_node(job, 0, 1, {}, {"--report-init", "--hang"})));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 2, {}, {"--report-init", "--hang"})));
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (worker_pids(nodes[1]->output_so_far()).size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  auto pids1 = worker_pids(nodes[1]->output_so_far());
  ASSERT_EQ(pids1.size(), 2u) << nodes[1]->output_so_far();
  ASSERT_TRUE(nodes[0]->wait_for_output("] FAKE_WORKER_PID=", 20s)) << nodes[0]->output_so_far();

  ASSERT_TRUE(nodes[0]->send_signal(SIGKILL));
  RunResult r0 = nodes[0]->wait(10s);
  RunResult r1 = nodes[1]->wait(30s);
  const std::string everything = "===== node 0 (killed)\n" + r0.output + "===== node 1\n" + r1.output;
  ASSERT_FALSE(r1.timed_out) << "node 1 did not exit after losing the master\n" << everything;
  EXPECT_NE(r1.exit_code, 0) << everything;
  EXPECT_NE(r1.output.find("lost the master"), std::string::npos) << everything;
  for (pid_t pid : pids1)
    EXPECT_TRUE(ddplaunch::testing::wait_until_gone(pid, 10s)) << "node 1's worker " << pid << " survived";
  for (pid_t pid : worker_pids(r0.output))  // node 0's own, via its orphan guard
    EXPECT_TRUE(ddplaunch::testing::wait_until_gone(pid, 10s)) << "node 0's worker " << pid << " survived";
}

// SIGSTOP keeps node 1's socket open but silent: only the heartbeat timeout can find it.
TEST(MultiNode, ASilentNodeIsLostAtTheHeartbeatTimeout) {
  MultiNodeJob job = new_job(2, "it2-node-silent", {"--heartbeat-interval", "0.2", "--heartbeat-timeout", "2", "--grace", "1"});
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  nodes.push_back(start_node(fake_worker_node(job, 0, 1, {}, {"--report-init", "--hang"})));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 1, {}, {"--report-init", "--hang"})));
  ASSERT_TRUE(nodes[0]->wait_for_output("] FAKE_WORKER_PID=", 20s)) << nodes[0]->output_so_far();
  ASSERT_TRUE(nodes[1]->wait_for_output("] FAKE_WORKER_PID=", 20s)) << nodes[1]->output_so_far();

  auto stopped_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(nodes[1]->send_signal(SIGSTOP));
  RunResult r0 = nodes[0]->wait(30s);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
  nodes[1]->send_signal(SIGCONT);  // it finds the master gone and stops its worker
  RunResult r1 = nodes[1]->wait(30s);
  const std::string everything = "===== node 0\n" + r0.output + "===== node 1 (stopped)\n" + r1.output;
  ASSERT_FALSE(r0.timed_out) << everything;
  ASSERT_FALSE(r1.timed_out) << everything;
  EXPECT_NE(r0.exit_code, 0) << everything;
  EXPECT_NE(r1.exit_code, 0) << everything;
  EXPECT_TRUE(std::regex_search(r0.output, std::regex(R"(node 1 [^\n]*was lost)"))) << everything;
  EXPECT_GE(seconds, 1.5) << "node 1 was declared lost before its heartbeat timeout\n" << everything;
  EXPECT_LT(seconds, 2 + 1 + 12.0) << everything;
  for (auto& result : {r0, r1})
    for (pid_t pid : worker_pids(result.output))
      EXPECT_TRUE(ddplaunch::testing::wait_until_gone(pid, 10s)) << "worker " << pid << " survived\n" << everything;
}

TEST(MultiNode, StatusListsEveryNodeOfARunningJob) {
  MultiNodeJob job = new_job(2, "it2-status");
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  nodes.push_back(start_node(fake_worker_node(job, 0, 1, {}, {"--report-init", "--hang"})));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 2, {}, {"--report-init", "--hang"})));
  ASSERT_TRUE(nodes[0]->wait_for_output("FAKE_WORKER_PID", 20s)) << nodes[0]->output_so_far();
  ASSERT_TRUE(nodes[1]->wait_for_output("FAKE_WORKER_PID", 20s)) << nodes[1]->output_so_far();

  RunResult status = ddplaunch::testing::run_command(
      {DDPLAUNCH_BIN, "status", "--master", job.master(), "--job-id", job.job_id}, 20s);
  ASSERT_FALSE(status.timed_out) << status.output;
  EXPECT_EQ(status.exit_code, 0) << status.output;

  // The node table: a header line starting with "node" and naming "host", then one row per node
  // (node host address nproc ...) up to the first blank line; other tables may follow.
  std::map<int, int> nproc_by_node;
  bool header = false;
  std::istringstream in(status.output);
  std::string line;
  static const std::regex row(R"(^(\d+)\s+\S+\s+(\S+)\s+(\d+)\s+)");
  while (std::getline(in, line)) {
    if (!header) {
      header = line.rfind("node ", 0) == 0 && line.find("host") != std::string::npos;
      continue;
    }
    if (line.find_first_not_of(" \t") == std::string::npos) break;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, row)) << "not a node row: '" << line << "'\n" << status.output;
    nproc_by_node[std::stoi(m[1])] = std::stoi(m[3]);
    EXPECT_EQ(m[2].str(), "127.0.0.1") << line;
  }
  EXPECT_TRUE(header) << status.output;
  ASSERT_EQ(nproc_by_node.size(), 2u) << status.output;
  EXPECT_EQ(nproc_by_node[0], 1) << status.output;
  EXPECT_EQ(nproc_by_node[1], 2) << status.output;
  EXPECT_NE(status.output.find(job.job_id), std::string::npos) << status.output;

  // A status query with the wrong job id is refused, and the job is undisturbed by both.
  RunResult wrong = ddplaunch::testing::run_command(
      {DDPLAUNCH_BIN, "status", "--master", job.master(), "--job-id", "not-this-job"}, 20s);
  ASSERT_FALSE(wrong.timed_out) << wrong.output;
  EXPECT_NE(wrong.exit_code, 0) << wrong.output;
  EXPECT_NE(wrong.output.find("job id"), std::string::npos) << wrong.output;

  for (auto& n : nodes) n->send_signal(SIGTERM);
  auto results = wait_all(nodes, 30s);
  for (std::size_t i = 0; i < results.size(); ++i)
    EXPECT_NE(results[i].exit_code, 0) << "node " << i << "\n" << all_output(results);
}

}  // namespace

namespace {
// `ddplaunch status` with no --master finds the job from this node's records: the two launchers
// of a loopback job are one job (chosen, and listed once when another job runs too), and a
// record whose launcher is gone is neither listed nor kept: its pid dead, or reused by a
// program that is no ddplaunch.
TEST(MultiNode, StatusFindsALoopbackJobOnceAndSkipsRecordsOfLaunchersThatAreGone) {
  const std::string runtime = ddplaunch::testing::temp_dir("job-records-");
  const std::map<std::string, std::string> env{{"XDG_RUNTIME_DIR", runtime}};
  MultiNodeJob job = new_job(2, "it2-one-listing");
  BackgroundProcess node0, node1, reused_pid;
  ASSERT_TRUE(node0.start(fake_worker_node(job, 0, 1, {}, {"--report-init", "--hang"}), env));
  ASSERT_TRUE(wait_listening(node0)) << node0.output_so_far();
  ASSERT_TRUE(node1.start(fake_worker_node(job, 1, 1, {}, {"--report-init", "--hang"}), env));
  ASSERT_TRUE(node0.wait_for_output("FAKE_WORKER_PID", 20s)) << node0.output_so_far();
  ASSERT_TRUE(node1.wait_for_output("FAKE_WORKER_PID", 20s)) << node1.output_so_far();
  ASSERT_TRUE(reused_pid.start({"/bin/sleep", "60"}));
  const std::string records = runtime + "/ddplaunch-jobs";
  const auto plant = [&](long pid) {
    const std::string folder = records + "/ddplaunch-" + std::to_string(pid);
    std::filesystem::create_directory(folder);
    std::ofstream(folder + "/job") << "job_id=gone-job\nmaster=127.0.0.1:1\npid=" << pid << "\ntoken=\n";
    return folder;
  };
  const std::string reused_folder = plant(reused_pid.pid());
  const std::string dead_folder = plant(2147480000L);  // above any pid_max: no such process

  // Jobs outside this test's records (/tmp/ddplaunch-jobs-UID is read too) may make it ask which.
  RunResult status = ddplaunch::testing::run_command({DDPLAUNCH_BIN, "status"}, 20s, env);
  EXPECT_EQ(count_of(status.output, job.job_id), 1) << status.output;
  EXPECT_EQ(status.output.find("gone-job"), std::string::npos) << status.output;
  if (status.output.find("several ddplaunch jobs") == std::string::npos) EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_FALSE(std::filesystem::exists(reused_folder)) << "a record of a reused pid was kept";
  EXPECT_FALSE(std::filesystem::exists(dead_folder)) << "a record of a dead launcher was kept";

  // Another job's launcher on this node: the choice is asked for, each job named once.
  MultiNodeJob other = new_job(1, "it2-other-job");
  BackgroundProcess other_node;
  ASSERT_TRUE(other_node.start(fake_worker_node(other, 0, 1, {}, {"--report-init", "--hang"}), env));
  ASSERT_TRUE(other_node.wait_for_output("FAKE_WORKER_PID", 20s)) << other_node.output_so_far();
  RunResult which = ddplaunch::testing::run_command({DDPLAUNCH_BIN, "status"}, 20s, env);
  EXPECT_NE(which.exit_code, 0) << which.output;
  EXPECT_EQ(count_of(which.output, "--job " + job.job_id + " "), 1) << which.output;
  EXPECT_EQ(count_of(which.output, "--job " + other.job_id + " "), 1) << which.output;
  EXPECT_EQ(which.output.find("gone-job"), std::string::npos) << which.output;
}

// While nodes are still joining, status names the ones that joined and how many are missing.
TEST(MultiNode, StatusWhileJoiningListsTheNodesThatJoined) {
  MultiNodeJob job = new_job(3, "it2-status-joining", {"--join-timeout", "30"});
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  nodes.push_back(start_node(fake_worker_node(job, 0, 1, {}, {"--hang"})));
  ASSERT_TRUE(wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(start_node(fake_worker_node(job, 1, 2, {}, {"--hang"})));
  ASSERT_TRUE(nodes[0]->wait_for_output("waiting for nodes: 2/3 joined", 20s)) << nodes[0]->output_so_far();
  RunResult status = ddplaunch::testing::run_command(
      {DDPLAUNCH_BIN, "status", "--master", job.master(), "--job-id", job.job_id}, 20s);
  ASSERT_FALSE(status.timed_out) << status.output;
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("joining: 2 of 3 node(s) joined, 1 missing"), std::string::npos) << status.output;
  static const std::regex row(R"((^|\n)1\s+\S+\s+127\.0\.0\.1\s+2\s*\n)");
  EXPECT_TRUE(std::regex_search(status.output, row)) << status.output;
  for (auto& n : nodes) n->send_signal(SIGTERM);
  wait_all(nodes, 30s);
}
}  // namespace

namespace {
// torchrun's --role with nodes running different roles: ROLE_RANK and ROLE_WORLD_SIZE are
// counted per role across nodes, RANK stays global.
TEST(MultiNode, RoleRanksAreCountedPerRoleAcrossNodes) {
  MultiNodeJob job = ddplaunch::testing::new_loopback_job(DDPLAUNCH_BIN, 3, "it2-roles", {});
  const std::vector<std::string> program = {"/bin/sh", "-c", "echo ROLES $RANK $ROLE_NAME $ROLE_RANK $ROLE_WORLD_SIZE"};
  const char* roles[] = {"trainer", "evaluator", "trainer"};
  std::vector<std::vector<std::string>> argv_by_node;
  for (int r = 0; r < 3; ++r)
    argv_by_node.push_back(ddplaunch::testing::node_argv(job, r, 2, {"--role", roles[r], "--no-python"}, program));
  auto results = ddplaunch::testing::run_job_nodes(argv_by_node, 60s);
  const std::string everything = all_output(results);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << everything;
  for (const char* line : {"ROLES 0 trainer 0 4", "ROLES 1 trainer 1 4", "ROLES 2 evaluator 0 2",
                           "ROLES 3 evaluator 1 2", "ROLES 4 trainer 2 4", "ROLES 5 trainer 3 4"})
    EXPECT_NE(everything.find(line), std::string::npos) << line << "\n" << everything;
}
// A process of an earlier job still holds the rendezvous port when the job starts: node 0
// retries the bind (bounded) instead of failing, and the job runs once the port is free.
// --ranks-filter counts global ranks, so "only ranks 1 and 2" can be said on a multi-node job:
// node 0 shows its second rank, node 1 its first, and nothing of ranks 0 and 3.
TEST(MultiNode, TheGlobalRanksFilterShowsTheNamedRanksOnEveryNode) {
  MultiNodeJob job = new_job(2, "it2-ranks-filter");
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  for (int node = 0; node < 2; ++node)
    nodes.push_back(start_node(fake_worker_node(job, node, 2, {"--ranks-filter", "1-2"}, {"--print-env"})));
  auto results = wait_all(nodes, kJobBound);
  const std::string everything = all_output(results);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << everything;
  EXPECT_NE(results[0].output.find("[node 0 rank 1] ENV RANK=1"), std::string::npos) << everything;
  EXPECT_NE(results[1].output.find("[node 1 rank 2] ENV RANK=2"), std::string::npos) << everything;
  EXPECT_EQ(everything.find("rank 0] ENV"), std::string::npos) << everything;
  EXPECT_EQ(everything.find("rank 3] ENV"), std::string::npos) << everything;
}

TEST(MultiNode, ARendezvousPortHeldForAFewSecondsDelaysTheStartInsteadOfFailingIt) {
  MultiNodeJob job = new_job(2, "it2-port-held");
  BackgroundProcess holder;  // listens on the port for 3 s, accepts nobody
  ASSERT_TRUE(holder.start({PYTHON_WITH_TORCH, "-c",
                            "import socket, sys, time\n"
                            "s = socket.socket()\n"
                            "s.bind(('127.0.0.1', " + std::to_string(job.port) + "))\n"
                            "s.listen()\n"
                            "print('HOLDING', flush=True)\n"
                            "time.sleep(3)\n"}));
  ASSERT_TRUE(holder.wait_for_output("HOLDING", 20s)) << holder.output_so_far();
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  nodes.push_back(start_node(fake_worker_node(job, 0, 1, {}, {"--report-init"})));
  nodes.push_back(start_node(fake_worker_node(job, 1, 1, {}, {"--report-init"})));
  auto results = wait_all(nodes, kJobBound);
  const std::string everything = all_output(results);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << everything;
  EXPECT_NE(results[0].output.find("retrying every second for up to 30 s"), std::string::npos) << everything;
  // The holder is named: this launcher runs as the same user, so /proc shows it.
  EXPECT_NE(results[0].output.find("it is held by pid " + std::to_string(holder.pid())), std::string::npos) << everything;
  EXPECT_NE(results[0].output.find("is free now"), std::string::npos) << everything;
}

}  // namespace
