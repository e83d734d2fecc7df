// Multi-host jobs on a fake cluster of network namespaces (3 hosts, 198.18.0.11-13): real gloo
// training across hosts (Python and C++), the environment the workers get, and what happens when
// a node dies or its link is cut mid-run. One ddplaunch per host, exactly as a user runs it.
#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "multi_node_job.h"
#include "netns_cluster.h"
#include "output_parsing.h"
#include "launcher_test_env.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono;

namespace {

constexpr int kRendezvousPort = 29400;

const std::vector<std::string>& kUnsetEnv = ddplaunch::testing::kLauncherEnvToUnset;

bool torch_available() { return ddplaunch::testing::torch_available(PYTHON_WITH_TORCH); }

// One ddplaunch per host of the cluster (node rank = host - 1), all started at once. With
// `nodes` below the host count (and --spares in flags) the last hosts start as spares.
class Job {
 public:
  Job(const dt::NetnsCluster& cluster, const std::vector<std::string>& flags, const std::vector<std::string>& program,
      int nodes = 0) {
    const dt::MultiNodeJob job{.launcher = DDPLAUNCH_BIN, .nodes = nodes > 0 ? nodes : cluster.hosts(),
                               .master_host = cluster.address(1),
                               .port = kRendezvousPort, .flags = flags};
    for (int host = 1; host <= cluster.hosts(); ++host) {
      nodes_.push_back(std::make_unique<dt::BackgroundProcess>());
      EXPECT_TRUE(nodes_.back()->start(cluster.exec_argv(host, dt::node_argv(job, host - 1, 1, {}, program)), {},
                                       kUnsetEnv))
          << nodes_.back()->output_so_far();
    }
  }

  dt::BackgroundProcess& node(int rank) { return *nodes_.at(rank); }
  int size() const { return static_cast<int>(nodes_.size()); }

  // Waits for every node (each at most `timeout` from now); results by node rank.
  std::vector<dt::RunResult> wait_all(milliseconds timeout) {
    const auto deadline = steady_clock::now() + timeout;
    std::vector<dt::RunResult> results;
    for (auto& n : nodes_) {
      auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
      results.push_back(n->wait(std::max(left, milliseconds(1))));
    }
    return results;
  }

  // True once every node's output contains `text` (e.g. its worker is running).
  bool wait_all_for(const std::string& text, milliseconds timeout) {
    const auto deadline = steady_clock::now() + timeout;
    for (auto& n : nodes_) {
      auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
      if (!n->wait_for_output(text, std::max(left, milliseconds(1)))) return false;
    }
    return true;
  }

 private:
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes_;
};

std::string describe(const std::vector<dt::RunResult>& results) { return dt::all_output(results); }

// "FINAL rank=R loss_first=A loss_last=B checksum=C" lines, from any node's output.
std::vector<dt::FinalLine> final_lines(const std::vector<dt::RunResult>& results) {
  std::vector<dt::FinalLine> out;
  for (const auto& r : results)
    for (auto& line : dt::final_lines(r.output)) out.push_back(std::move(line));
  return out;
}

// Real training across the three hosts: all succeed, same parameters everywhere, loss went down,
// and each launcher auto-selected eth0 (the interface its rendezvous connection uses).
void expect_training_agrees(const std::vector<dt::RunResult>& results) {
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_FALSE(results[i].timed_out) << "node " << i << " hung\n" << describe(results);
    EXPECT_EQ(results[i].exit_code, 0) << "node " << i << "\n" << describe(results);
    EXPECT_NE(results[i].output.find("NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME unset: using eth0"), std::string::npos)
        << "node " << i << " did not auto-select eth0\n" << results[i].output;
  }
  std::vector<dt::FinalLine> finals = final_lines(results);
  ASSERT_EQ(finals.size(), results.size()) << describe(results);
  std::set<int> ranks;
  for (const auto& f : finals) {
    ranks.insert(f.rank);
    EXPECT_EQ(f.checksum, finals.front().checksum) << "rank " << f.rank << " differs from rank " << finals.front().rank;
    EXPECT_LT(f.loss_last, f.loss_first) << "rank " << f.rank << " did not learn";
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2}));
}

// Hanging workers on three hosts with fast failure detection, every worker started.
const std::vector<std::string> kFastDetection = {"--heartbeat-interval", "0.2", "--heartbeat-timeout", "2",
                                                 "--grace", "1"};
const std::vector<std::string> kHangingWorker = {FAKE_WORKER_BIN, "--print-env", "--hang"};

}  // namespace

TEST(NetnsJob, WorkersGetRoutableMasterAndAutoSelectedInterface) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("jen"), 3);
  Job job(cluster, {}, {FAKE_WORKER_BIN, "--print-env"});
  auto results = job.wait_all(seconds(60));
  for (int i = 0; i < 3; ++i) {
    const std::string& out = results[i].output;
    const std::string prefix = "[node " + std::to_string(i) + " rank " + std::to_string(i) + "] ENV ";
    EXPECT_EQ(results[i].exit_code, 0) << describe(results);
    EXPECT_NE(out.find(prefix + "MASTER_ADDR=198.18.0.11\n"), std::string::npos) << out;
    EXPECT_NE(out.find(prefix + "RANK=" + std::to_string(i) + "\n"), std::string::npos) << out;
    EXPECT_NE(out.find(prefix + "WORLD_SIZE=3\n"), std::string::npos) << out;
    EXPECT_NE(out.find(prefix + "NCCL_SOCKET_IFNAME=eth0\n"), std::string::npos) << out;
    EXPECT_NE(out.find(prefix + "GLOO_SOCKET_IFNAME=eth0\n"), std::string::npos) << out;
    EXPECT_EQ(out.find("MASTER_ADDR=127."), std::string::npos) << out;
  }
}

TEST(NetnsJob, PythonGlooTrainingAgreesAcrossHosts) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  if (!torch_available()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch.distributed";
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("jpy"), 3);
  Job job(cluster, {},
          {PYTHON_WITH_TORCH, std::string(SOURCE_DIR) + "/worker_shim/examples/train_ddp.py", "--steps", "20"});
  expect_training_agrees(job.wait_all(seconds(240)));
}

TEST(NetnsJob, CppGlooTrainingAgreesAcrossHosts) {
#ifndef TRAIN_BINARY_BIN
  GTEST_SKIP() << "train_binary was not built (no libtorch)";
#else
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("jcc"), 3);
  Job job(cluster, {}, {TRAIN_BINARY_BIN, "--steps", "20"});
  expect_training_agrees(job.wait_all(seconds(240)));
#endif
}

TEST(NetnsJob, KilledNodeStopsTheOthersAndIsNamed) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("jki"), 3);
  Job job(cluster, kFastDetection, kHangingWorker);
  ASSERT_TRUE(job.wait_all_for("ENV RANK=", seconds(60))) << describe(job.wait_all(seconds(1)));

  ASSERT_TRUE(job.node(2).send_signal(SIGKILL));  // node 2 = host 3: its ddplaunch dies without a word
  const auto killed = steady_clock::now();
  auto results = job.wait_all(seconds(60));
  // Generous: detection is at once (connection reset) or at the 2 s heartbeat timeout, plus 1 s grace.
  EXPECT_LT(duration<double>(steady_clock::now() - killed).count(), 20.0) << describe(results);
  for (int i = 0; i < 2; ++i) {
    EXPECT_FALSE(results[i].timed_out) << "node " << i << " did not stop\n" << describe(results);
    EXPECT_NE(results[i].exit_code, 0) << describe(results);
  }
  EXPECT_EQ(results[2].term_signal, SIGKILL);
  EXPECT_NE(results[0].output.find("node 2 ("), std::string::npos) << results[0].output;
  EXPECT_NE(results[0].output.find("was lost"), std::string::npos) << results[0].output;
  EXPECT_NE(results[1].output.find("was lost"), std::string::npos)
      << "node 1 was not told why the job stopped\n" << results[1].output;
  // The killed launcher's worker goes too (orphan guard), and nothing stays on the other hosts.
  for (int host = 1; host <= 3; ++host)
    EXPECT_EQ(cluster.processes_left(host, seconds(10)), std::set<pid_t>{}) << "processes left on host " << host;
}

TEST(NetnsJob, CutLinkEndsTheJobOnEveryHost) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("jli"), 3);
  Job job(cluster, kFastDetection, kHangingWorker);
  ASSERT_TRUE(job.wait_all_for("ENV RANK=", seconds(60))) << describe(job.wait_all(seconds(1)));

  cluster.set_link(3, false);  // host 3 (node 2) drops off the network; its processes live on
  const auto cut = steady_clock::now();
  auto results = job.wait_all(seconds(60));
  const double seconds_to_end = duration<double>(steady_clock::now() - cut).count();
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(results[i].timed_out) << "node " << i << " did not stop\n" << describe(results);
    EXPECT_NE(results[i].exit_code, 0) << describe(results);
  }
  // Generous: both sides notice at the 2 s heartbeat timeout, then stop their workers (1 s grace).
  EXPECT_LT(seconds_to_end, 20.0) << describe(results);
  EXPECT_NE(results[0].output.find("node 2 ("), std::string::npos) << results[0].output;
  EXPECT_NE(results[0].output.find("was lost"), std::string::npos) << results[0].output;
  EXPECT_NE(results[2].output.find("lost the master"), std::string::npos)
      << "node 2 did not notice that the master is gone\n" << results[2].output;
  for (int host = 1; host <= 3; ++host)
    EXPECT_EQ(cluster.processes_left(host, seconds(10)), std::set<pid_t>{}) << "processes left on host " << host;
}

// Membership: --nodes 2 --spares 1 on three hosts; host 2's link is cut mid-run. The master
// declares node 1 lost at the heartbeat timeout and the spare on host 3 takes its slot; the
// job finishes on hosts 1 and 3 with the same world size; host 2 exits by itself.
TEST(NetnsJob, CutLinkOnAnActiveNodeHandsItsSlotToTheSpare) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("jsp"), 3);
  std::vector<std::string> flags = kFastDetection;
  flags.insert(flags.end(), {"--spares", "1"});
  Job job(cluster, flags, {FAKE_WORKER_BIN, "--print-env", "--report-init", "--sleep-ms", "6000"}, 2);
  ASSERT_TRUE(job.node(2).wait_for_output("is a hot spare of this job", seconds(60)))
      << describe(job.wait_all(seconds(1)));
  ASSERT_TRUE(job.node(1).wait_for_output("ENV RANK=1", seconds(60))) << describe(job.wait_all(seconds(1)));

  cluster.set_link(2, false);  // host 2 (node 1) drops off the network; its processes live on
  auto results = job.wait_all(seconds(90));
  const std::string all = describe(results);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(results[i].timed_out) << "launcher " << i << " did not end\n" << all;
  EXPECT_EQ(results[0].exit_code, 0) << all;
  EXPECT_EQ(results[2].exit_code, 0) << all;
  EXPECT_NE(results[1].exit_code, 0) << all;
  EXPECT_TRUE(std::regex_search(results[0].output, std::regex(R"(node 1 \([^)]*198\.18\.0\.12\) was lost: no message)")))
      << all;
  EXPECT_NE(results[0].output.find("the spare on host"), std::string::npos) << all;
  EXPECT_NE(results[2].output.find("this hot spare takes the place of node 1 in generation 1 (2 node(s), world size 2)"),
            std::string::npos)
      << all;
  EXPECT_NE(results[2].output.find("[node 1 rank 1] ENV WORLD_SIZE=2"), std::string::npos) << all;
  EXPECT_NE(results[1].output.find("lost the master"), std::string::npos) << all;
  for (int host = 1; host <= 3; ++host)
    EXPECT_EQ(cluster.processes_left(host, seconds(10)), std::set<pid_t>{}) << "processes left on host " << host;
}
