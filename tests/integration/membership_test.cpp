// Membership with real launchers on 127.0.0.1: a hot spare takes a killed node's
// place and a gloo DDP script resumes from its checkpoint with the same world size; a spare lost
// while idle changes nothing; a node whose ranks always fail init is excluded and replaced;
// --nodes MIN:MAX shrinks on a loss and grows on a join; a restarted launcher rejoins as a
// spare and replaces the next loss; the master's loss ends every launcher with the reason.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "multi_node_job.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::testing::BackgroundProcess;
using ddplaunch::testing::MultiNodeJob;
using ddplaunch::testing::RunResult;
using ddplaunch::testing::start_node;
using ddplaunch::testing::wait_listening;
namespace fs = std::filesystem;

constexpr auto kJobBound = 90s;    // "finished, not hung", on a busy 2-core machine
constexpr auto kStepBound = 40s;   // one expected line of output
// A lost connection is seen at once; a silent one within 2 s.
const std::vector<std::string> kQuickLoss = {"--heartbeat-interval", "0.2", "--heartbeat-timeout", "2", "--grace", "1"};

MultiNodeJob membership_job(int nodes_or_max, const std::string& id, const std::vector<std::string>& shape) {
  std::vector<std::string> flags = kQuickLoss;
  flags.insert(flags.end(), shape.begin(), shape.end());
  return ddplaunch::testing::new_loopback_job(DDPLAUNCH_BIN, nodes_or_max, id, flags);
}

std::vector<std::string> fake_worker_node(const MultiNodeJob& job, int node_rank, const std::vector<std::string>& args) {
  std::vector<std::string> program{FAKE_WORKER_BIN};
  program.insert(program.end(), args.begin(), args.end());
  return ddplaunch::testing::node_argv(job, node_rank, 1, {}, program);
}

// --nodes MIN:MAX: node_argv passes --nodes N; the range comes after it and wins.
std::vector<std::string> with_flags(std::vector<std::string> argv, const std::vector<std::string>& flags) {
  auto dashes = std::find(argv.begin(), argv.end(), "--");
  argv.insert(dashes, flags.begin(), flags.end());
  return argv;
}

struct Cluster {
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  std::string everything() const {
    std::string out;
    for (std::size_t i = 0; i < nodes.size(); ++i) out += "===== launcher " + std::to_string(i) + "\n" + nodes[i]->output_so_far();
    return out;
  }
};

// Node 0 first (it hosts the rendezvous), then the others in order.
void start_all(Cluster& c, const std::vector<std::vector<std::string>>& argv_by_launcher) {
  c.nodes.push_back(start_node(argv_by_launcher[0]));
  ASSERT_TRUE(wait_listening(*c.nodes[0])) << c.nodes[0]->output_so_far();
  for (std::size_t i = 1; i < argv_by_launcher.size(); ++i) c.nodes.push_back(start_node(argv_by_launcher[i]));
}

// Two nodes and a spare (node rank 2), every launcher running fake_worker with `work`;
// returns once the spare says it waits and both nodes started their workers (the spare may
// join before node 1 does: until then the job is still joining).
void start_two_and_a_spare(Cluster& c, const MultiNodeJob& job, const std::vector<std::string>& work) {
  start_all(c, {fake_worker_node(job, 0, work), fake_worker_node(job, 1, work), fake_worker_node(job, 2, work)});
  ASSERT_TRUE(c.nodes[2]->wait_for_output("is a hot spare of this job", kStepBound)) << c.everything();
  for (int node : {0, 1})
    ASSERT_TRUE(c.nodes[node]->wait_for_output("generation 0: starting", kStepBound)) << c.everything();
}

std::vector<int> world_sizes_seen(const std::string& output, int node) {
  std::vector<int> sizes;
  for (const auto& line : ddplaunch::testing::env_lines(output))
    if (line.node == node && line.rank == 0 && line.name == "WORLD_SIZE" && line.value) sizes.push_back(std::stoi(*line.value));
  return sizes;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(Membership, ASpareTakesAKilledNodesPlaceAndTheDdpScriptResumesWithTheSameWorldSize) {
  if (access(PYTHON_WITH_TORCH, X_OK) != 0) GTEST_SKIP() << PYTHON_WITH_TORCH << " not found";
  fs::path dir = fs::temp_directory_path() / ("ddplaunch-spare-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string checkpoint = (dir / "ckpt.pt").string();
  const std::string script = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/spare_train.py";
  MultiNodeJob job = membership_job(2, "mem-spare-ddp", {"--spares", "1"});
  auto node = [&](int rank) {
    return ddplaunch::testing::node_argv(job, rank, 1, {}, {PYTHON_WITH_TORCH, script, checkpoint, "60", "0.1"});
  };
  Cluster c;
  start_all(c, {node(0), node(1), node(2)});  // node rank 2 >= --nodes 2: a spare
  ASSERT_TRUE(c.nodes[2]->wait_for_output("is a hot spare of this job", kStepBound)) << c.everything();
  ASSERT_TRUE(c.nodes[0]->wait_for_output("STEP 8\n", kStepBound)) << c.everything();

  ASSERT_TRUE(c.nodes[1]->send_signal(SIGKILL));
  RunResult killed = c.nodes[1]->wait(10s);
  RunResult r0 = c.nodes[0]->wait(kJobBound);
  RunResult spare = c.nodes[2]->wait(kJobBound);
  const std::string all = "===== node 0\n" + r0.output + "===== node 1 (killed)\n" + killed.output +
                          "===== spare\n" + spare.output;
  fs::remove_all(dir);
  ASSERT_FALSE(r0.timed_out || spare.timed_out) << all;
  EXPECT_EQ(r0.exit_code, 0) << all;
  EXPECT_EQ(spare.exit_code, 0) << all;
  EXPECT_TRUE(std::regex_search(r0.output, std::regex(R"(node 1 \([^)]*\) was lost)"))) << all;
  EXPECT_NE(r0.output.find("takes node rank 1 (world size unchanged)"), std::string::npos) << all;
  EXPECT_NE(r0.output.find("no restart budget spent"), std::string::npos) << all;
  EXPECT_NE(spare.output.find("this hot spare takes the place of node 1 in generation 1"), std::string::npos) << all;
  // Same world size, resumed from the checkpoint, on both ranks.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(spare.output, m, std::regex(R"(DONE rank=1 world=2 generation=1 resumed_from=(\d+))"))) << all;
  EXPECT_GE(std::stoi(m[1]), 8) << all;
  EXPECT_TRUE(std::regex_search(r0.output, std::regex(R"(DONE rank=0 world=2 generation=1 resumed_from=\d+)"))) << all;
  EXPECT_NE(r0.output.find("1 membership change(s)"), std::string::npos) << all;
}

TEST(Membership, ASpareLostWhileIdleChangesNothing) {
  MultiNodeJob job = membership_job(2, "mem-spare-idle", {"--spares", "1"});
  const std::vector<std::string> work{"--report-init", "--sleep-ms", "4000"};
  Cluster c;
  start_two_and_a_spare(c, job, work);
  if (HasFatalFailure()) return;
  // `ddplaunch status` lists the membership: two active launchers in slots 0 and 1, one spare.
  RunResult status = ddplaunch::testing::run_command(
      {DDPLAUNCH_BIN, "status", "--master", job.master(), "--job-id", job.job_id}, 20s);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("membership (active, spare, excluded, lost):"), std::string::npos) << status.output;
  EXPECT_TRUE(std::regex_search(status.output, std::regex(R"(\n\d+\s+\S+\s+active\s+0\s)"))) << status.output;
  EXPECT_TRUE(std::regex_search(status.output, std::regex(R"(\n\d+\s+\S+\s+active\s+1\s)"))) << status.output;
  EXPECT_TRUE(std::regex_search(status.output, std::regex(R"(\n\d+\s+\S+\s+spare\s+-\s)"))) << status.output;
  ASSERT_TRUE(c.nodes[2]->send_signal(SIGKILL));
  c.nodes[2]->wait(10s);
  RunResult r0 = c.nodes[0]->wait(kJobBound), r1 = c.nodes[1]->wait(kJobBound);
  const std::string all = "===== node 0\n" + r0.output + "===== node 1\n" + r1.output;
  EXPECT_EQ(r0.exit_code, 0) << all;
  EXPECT_EQ(r1.exit_code, 0) << all;
  // Closed or reset: a SIGKILLed launcher's socket may still hold unread data (an RST).
  EXPECT_NE(r0.output.find("the hot spare on host"), std::string::npos) << all;
  EXPECT_TRUE(r0.output.find("left: connection closed") != std::string::npos ||
              r0.output.find("left: Connection reset by peer") != std::string::npos)
      << all;
  EXPECT_NE(r0.output.find("nothing changes for the job"), std::string::npos) << all;
  EXPECT_NE(r0.output.find("job succeeded: 2 node(s), generation 0, 0 restart(s)\n"), std::string::npos) << all;
  EXPECT_NE(r0.output.find("hot spare on host"), std::string::npos) << all;
}

TEST(Membership, ANodeWhoseRanksAlwaysFailInitIsExcludedAndReplacedBySpare) {
  MultiNodeJob job = membership_job(2, "mem-exclude", {"--spares", "1"});
  const std::vector<std::string> work{"--report-init", "--sleep-ms", "1500"};
  Cluster c;
  // Each failing init takes a second: the spare, started with the others, has joined before
  // the second failure however loaded the machine (it took 135 ms once, after two fast ones).
  start_all(c, {fake_worker_node(job, 0, work),
                fake_worker_node(job, 1, {"--fail-init-on-gen", "-1", "--fail-init-after-ms", "1000"}),
                fake_worker_node(job, 2, work)});
  RunResult r0 = c.nodes[0]->wait(kJobBound), bad = c.nodes[1]->wait(kJobBound), spare = c.nodes[2]->wait(kJobBound);
  const std::string all = "===== node 0\n" + r0.output + "===== node 1 (bad)\n" + bad.output + "===== spare\n" + spare.output;
  ASSERT_FALSE(r0.timed_out || bad.timed_out || spare.timed_out) << all;
  EXPECT_EQ(r0.exit_code, 0) << all;
  EXPECT_EQ(spare.exit_code, 0) << all;
  EXPECT_NE(bad.exit_code, 0) << all;
  EXPECT_TRUE(std::regex_search(r0.output, std::regex(R"(node 1 \(host [^)]+\) excluded after 2 init failures on its ranks: [^\n]*fake init failure)")))
      << all;
  EXPECT_NE(bad.output.find("the master dismissed this node: node 1"), std::string::npos) << all;
  EXPECT_NE(spare.output.find("this hot spare takes the place of node 1"), std::string::npos) << all;
  // One init restart was spent on the first failure; the exclusion spent none.
  EXPECT_NE(r0.output.find("job succeeded: 2 node(s), generation 2, 1 restart(s), 1 membership change(s)"),
            std::string::npos)
      << all;
}

TEST(Membership, AnElasticJobShrinksOnALossAndGrowsWhenALauncherJoins) {
  MultiNodeJob job = membership_job(3, "mem-elastic", {});
  const std::vector<std::string> elastic{"--nodes", "2:3", "--last-call", "20"};
  const std::vector<std::string> work{"--report-init", "--print-env", "--sleep-ms", "8000"};
  auto node = [&](int rank) { return with_flags(fake_worker_node(job, rank, work), elastic); };
  Cluster c;
  start_all(c, {node(0), node(1), node(2)});
  ASSERT_TRUE(c.nodes[2]->wait_for_output("] FAKE_WORKER_PID=", kStepBound)) << c.everything();
  ASSERT_TRUE(c.nodes[0]->wait_for_output("[node 0 rank 0] ENV WORLD_SIZE=3", kStepBound)) << c.everything();
  ASSERT_TRUE(c.nodes[2]->send_signal(SIGKILL));
  c.nodes[2]->wait(10s);
  ASSERT_TRUE(c.nodes[0]->wait_for_output("the job shrinks to 2 node(s)", kStepBound)) << c.everything();
  ASSERT_TRUE(c.nodes[0]->wait_for_output("generation 1: starting 1 worker(s)", kStepBound)) << c.everything();
  // The shrunk generation's worker has printed its world size (on a loaded machine the grow
  // could otherwise stop it before it printed anything).
  ASSERT_TRUE(c.nodes[0]->wait_for_output("[node 0 rank 0] ENV WORLD_SIZE=2", kStepBound)) << c.everything();
  c.nodes.push_back(start_node(node(2)));  // a new launcher: the job grows again
  RunResult r0 = c.nodes[0]->wait(kJobBound), r1 = c.nodes[1]->wait(kJobBound), late = c.nodes[3]->wait(kJobBound);
  const std::string all = "===== node 0\n" + r0.output + "===== node 1\n" + r1.output + "===== late\n" + late.output;
  ASSERT_FALSE(r0.timed_out || r1.timed_out || late.timed_out) << all;
  EXPECT_EQ(r0.exit_code, 0) << all;
  EXPECT_EQ(r1.exit_code, 0) << all;
  EXPECT_EQ(late.exit_code, 0) << all;
  EXPECT_NE(r0.output.find("the job grows to 3 node(s)"), std::string::npos) << all;
  EXPECT_EQ(world_sizes_seen(r0.output, 0), (std::vector<int>{3, 2, 3})) << all;
  EXPECT_NE(r0.output.find("2 membership change(s)"), std::string::npos) << all;
}

TEST(Membership, ARestartedLauncherRejoinsAsASpareAndReplacesTheNextLoss) {
  MultiNodeJob job = membership_job(2, "mem-rejoin", {"--spares", "1"});
  const std::vector<std::string> work{"--report-init", "--sleep-ms", "8000"};
  Cluster c;
  start_two_and_a_spare(c, job, work);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(c.nodes[1]->wait_for_output("] FAKE_WORKER_PID=", kStepBound)) << c.everything();
  ASSERT_TRUE(c.nodes[1]->send_signal(SIGKILL));
  c.nodes[1]->wait(10s);
  ASSERT_TRUE(c.nodes[2]->wait_for_output("this hot spare takes the place of node 1", kStepBound)) << c.everything();
  // The killed node's launcher is started again, same command line: it comes back as a spare.
  c.nodes.push_back(start_node(fake_worker_node(job, 1, work)));
  ASSERT_TRUE(c.nodes[3]->wait_for_output("is a hot spare of this job", kStepBound)) << c.everything();
  ASSERT_TRUE(c.nodes[2]->send_signal(SIGKILL));  // the promoted spare is lost in turn
  c.nodes[2]->wait(10s);
  RunResult r0 = c.nodes[0]->wait(kJobBound), back = c.nodes[3]->wait(kJobBound);
  const std::string all = "===== node 0\n" + r0.output + "===== restarted launcher\n" + back.output;
  ASSERT_FALSE(r0.timed_out || back.timed_out) << all;
  EXPECT_EQ(r0.exit_code, 0) << all;
  EXPECT_EQ(back.exit_code, 0) << all;
  EXPECT_EQ(count(r0.output, "joined as a hot spare"), 2) << all;
  EXPECT_NE(back.output.find("this hot spare takes the place of node 1 in generation 2"), std::string::npos) << all;
  EXPECT_NE(r0.output.find("2 membership change(s)"), std::string::npos) << all;
}

TEST(Membership, TheMasterLostEndsEveryLauncherWithTheReason) {
  MultiNodeJob job = membership_job(2, "mem-master-lost", {"--spares", "1"});
  const std::vector<std::string> work{"--report-init", "--hang"};
  Cluster c;
  start_two_and_a_spare(c, job, work);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(c.nodes[1]->wait_for_output("] FAKE_WORKER_PID=", kStepBound)) << c.everything();
  ASSERT_TRUE(c.nodes[0]->send_signal(SIGKILL));
  c.nodes[0]->wait(10s);
  // Heartbeat timeout 2 s: both exit by themselves well within the bound.
  RunResult r1 = c.nodes[1]->wait(30s), spare = c.nodes[2]->wait(30s);
  const std::string all = "===== node 1\n" + r1.output + "===== spare\n" + spare.output;
  ASSERT_FALSE(r1.timed_out || spare.timed_out) << all;
  EXPECT_NE(r1.exit_code, 0) << all;
  EXPECT_NE(spare.exit_code, 0) << all;
  EXPECT_NE(r1.output.find("lost the master"), std::string::npos) << all;
  EXPECT_NE(spare.output.find("lost the master"), std::string::npos) << all;
  EXPECT_NE(spare.output.find("while waiting as a hot spare"), std::string::npos) << all;
}

}  // namespace

// A master waiting for nodes of an elastic job must exit on SIGTERM (the coordinator's
// periodic timer must not keep its loop alive until a SIGKILL).
// Whatever ends a node, nothing of the job's keeps it running.
TEST(Membership, AMasterWaitingForNodesEndsOnSigterm) {
  MultiNodeJob job = membership_job(3, "mem-sigterm-wait", {});
  const std::vector<std::string> elastic{"--nodes", "2:3", "--last-call", "30"};
  auto node = [&](int rank) { return with_flags(fake_worker_node(job, rank, {"--sleep-ms", "30000"}), elastic); };
  Cluster c;
  start_all(c, {node(0), node(1)});  // MIN reached, waiting for the last call to MAX
  ASSERT_TRUE(c.nodes[0]->wait_for_output("waiting for nodes: 2/3 joined", kStepBound)) << c.everything();
  ASSERT_TRUE(c.nodes[0]->send_signal(SIGTERM));
  RunResult master = c.nodes[0]->wait(kStepBound);
  ASSERT_FALSE(master.timed_out) << "the master outlived SIGTERM\n" << c.everything();
  EXPECT_EQ(master.exit_code, 128 + SIGTERM) << master.output;
  RunResult other = c.nodes[1]->wait(kStepBound);
  ASSERT_FALSE(other.timed_out) << "node 1 outlived its master\n" << other.output;
  EXPECT_NE(other.exit_code, 0) << other.output;
}

// A restart backoff (--backoff > 0) is running
// when the master is told to stop, or when a node is lost. Every node has already finished its
// generation, so nothing but the backoff timer is left: the master must still end, with the
// reason, and every launcher with it.
namespace {

const std::vector<std::string> kLongBackoff{"--max-restarts", "3", "--backoff", "20"};

void start_two_in_a_backoff(Cluster& c, const MultiNodeJob& job) {
  auto node = [&](int rank) {
    return with_flags(fake_worker_node(job, rank, {"--sleep-ms", "300", "--exit", "1"}), kLongBackoff);
  };
  start_all(c, {node(0), node(1)});
  ASSERT_TRUE(c.nodes[0]->wait_for_output("restarting the whole group on every node: generation 1", kStepBound))
      << c.everything();
}

}  // namespace

TEST(Membership, AMasterInARestartBackoffEndsOnSigterm) {
  MultiNodeJob job = membership_job(2, "mem-backoff-term", {});
  Cluster c;
  start_two_in_a_backoff(c, job);
  ASSERT_TRUE(c.nodes[0]->send_signal(SIGTERM));
  RunResult master = c.nodes[0]->wait(kStepBound);
  ASSERT_FALSE(master.timed_out) << "the master outlived SIGTERM in a 20 s backoff\n" << c.everything();
  EXPECT_EQ(master.exit_code, 128 + SIGTERM) << master.output;
  RunResult other = c.nodes[1]->wait(kStepBound);
  ASSERT_FALSE(other.timed_out) << "node 1 outlived its master\n" << other.output;
  // The job was ended by the stop, not by the master's exit timer closing the connection.
  EXPECT_EQ(other.exit_code, 128 + SIGTERM) << other.output;
  EXPECT_EQ(other.output.find("lost the master"), std::string::npos) << other.output;
  EXPECT_EQ(master.output.find("generation 1 started"), std::string::npos) << "the backoff ran out after the stop";
}

TEST(Membership, ANodeLostInARestartBackoffEndsTheJobWithTheReason) {
  MultiNodeJob job = membership_job(2, "mem-backoff-lost", {});
  Cluster c;
  start_two_in_a_backoff(c, job);
  ASSERT_TRUE(c.nodes[1]->send_signal(SIGKILL));
  c.nodes[1]->wait(10s);
  RunResult master = c.nodes[0]->wait(kStepBound);
  ASSERT_FALSE(master.timed_out) << "the master outlived its only other node in a 20 s backoff\n" << c.everything();
  EXPECT_NE(master.exit_code, 0) << master.output;
  EXPECT_NE(master.output.find("node 1"), std::string::npos) << "the loss is not named\n" << master.output;
}
