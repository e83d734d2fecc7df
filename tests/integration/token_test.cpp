// The rendezvous token with real launchers on 127.0.0.1: a --token value never shows in
// /proc/PID/cmdline (of ddplaunch or of its orphan guard); a multi-node job without a token
// warns once on the master; with --token-file, joins are authenticated and `ddplaunch status`
// without the token is refused.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "launcher_test_env.h"
#include "multi_node_job.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::testing::BackgroundProcess;
using ddplaunch::testing::count_of;
using ddplaunch::testing::MultiNodeJob;
using ddplaunch::testing::RunResult;

constexpr auto kJobBound = 60s;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The child of `parent` whose name (comm) is `name`, if any.
std::optional<pid_t> child_named(pid_t parent, const std::string& name) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid_text = entry.path().filename().string();
    if (pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_text(entry.path().string() + "/stat");  // "pid (comm) state ppid ..."
    const auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && stat.substr(open + 1, close - open - 1) == name) return std::stoi(pid_text);
  }
  return std::nullopt;
}

TEST(Token, ATokenOnTheCommandLineIsHiddenFromTheLauncherAndItsGuard) {
  const std::string secret = "hunter2-token-value";
  BackgroundProcess launcher;
  ASSERT_TRUE(launcher.start({DDPLAUNCH_BIN, "--standalone", "--nproc-per-node", "1", "--grace", "1", "--token",
                              secret, "--set", "token=" + secret, "--", "/bin/sleep", "30"}));
  ASSERT_TRUE(launcher.wait_for_output("starting 1 worker", 30s)) << launcher.output_so_far();
  const std::string cmdline = read_text("/proc/" + std::to_string(launcher.pid()) + "/cmdline");
  EXPECT_NE(cmdline.find("--token"), std::string::npos) << cmdline;
  EXPECT_EQ(cmdline.find(secret), std::string::npos) << cmdline;
  auto guard = child_named(launcher.pid(), "ddplaunch-guard");
  ASSERT_TRUE(guard) << "no ddplaunch-guard child of " << launcher.pid();
  const std::string guard_cmdline = read_text("/proc/" + std::to_string(*guard) + "/cmdline");
  EXPECT_NE(guard_cmdline.find("--token"), std::string::npos) << guard_cmdline;
  EXPECT_EQ(guard_cmdline.find(secret), std::string::npos) << guard_cmdline;
  ASSERT_TRUE(launcher.send_signal(SIGTERM));
  RunResult r = launcher.wait(30s);
  EXPECT_FALSE(r.timed_out) << r.output;
}

TEST(Token, AMultiNodeJobWithoutATokenWarnsOnceOnTheMaster) {
  MultiNodeJob job = ddplaunch::testing::new_loopback_job(DDPLAUNCH_BIN, 2, "tok-none");
  std::vector<std::vector<std::string>> argv_by_node;
  for (int r = 0; r < job.nodes; ++r)
    argv_by_node.push_back(ddplaunch::testing::node_argv(job, r, 1, {}, {"/bin/true"}));
  auto results = ddplaunch::testing::run_job_nodes(argv_by_node, kJobBound);
  ASSERT_EQ(results.size(), 2u);
  const std::string warning = "no rendezvous token: anyone who can reach port " + std::to_string(job.port) +
                              " can join this job, and whoever holds that port before this launcher (or while nodes "
                              "reconnect) can pose as its master";
  EXPECT_EQ(count_of(results[0].output, warning), 1) << results[0].output;
  EXPECT_EQ(count_of(results[1].output, "no rendezvous token"), 0) << results[1].output;
  EXPECT_EQ(results[0].exit_code, 0) << results[0].output;
}

// A one-node job needs nobody else to know its token: it makes its own, so it is authenticated
// and says nothing of a missing token, even with a --master other hosts could reach.
TEST(Token, AOneNodeJobWithoutATokenMakesItsOwnAndDoesNotWarn) {
  const int port = ddplaunch::testing::free_tcp_port();
  RunResult r = ddplaunch::testing::run_command(
      {DDPLAUNCH_BIN, "--nodes", "1", "--master", "127.0.0.1:" + std::to_string(port), "--history-file", "off", "--",
       "/bin/true"},
      kJobBound, {}, ddplaunch::testing::kLauncherEnvToUnset);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("authentication on"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("no rendezvous token"), std::string::npos) << r.output;
}

TEST(Token, WithATokenFileJoinsAreAuthenticatedAndStatusWithoutItIsRefused) {
  const std::string dir = ddplaunch::testing::temp_dir("ddplaunch-token-");
  const std::string token_path = dir + "/token";
  std::ofstream(token_path) << "a-shared-secret\n";
  ASSERT_EQ(chmod(token_path.c_str(), 0600), 0);
  MultiNodeJob job = ddplaunch::testing::new_loopback_job(DDPLAUNCH_BIN, 2, "tok-file", {"--token-file", token_path});
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  nodes.push_back(ddplaunch::testing::start_node(ddplaunch::testing::node_argv(job, 0, 1, {}, {"/bin/sleep", "30"})));
  ASSERT_TRUE(ddplaunch::testing::wait_listening(*nodes[0])) << nodes[0]->output_so_far();
  nodes.push_back(ddplaunch::testing::start_node(ddplaunch::testing::node_argv(job, 1, 1, {}, {"/bin/sleep", "30"})));
  ASSERT_TRUE(nodes[0]->wait_for_output("starting 1 worker", 30s)) << nodes[0]->output_so_far();
  ASSERT_TRUE(nodes[1]->wait_for_output("starting 1 worker", 30s)) << nodes[1]->output_so_far();
  EXPECT_NE(nodes[0]->output_so_far().find("authentication on"), std::string::npos) << nodes[0]->output_so_far();
  EXPECT_EQ(nodes[0]->output_so_far().find("no rendezvous token"), std::string::npos) << nodes[0]->output_so_far();

  RunResult without = ddplaunch::testing::run_command(
      {DDPLAUNCH_BIN, "status", "--master", job.master(), "--job-id", job.job_id}, 20s, {}, {"DDPLAUNCH_TOKEN"});
  EXPECT_FALSE(without.timed_out);
  EXPECT_NE(without.exit_code, 0) << without.output;
  EXPECT_NE(without.output.find("cannot get the status"), std::string::npos) << without.output;
  RunResult with = ddplaunch::testing::run_command(
      {DDPLAUNCH_BIN, "status", "--master", job.master(), "--job-id", job.job_id, "--token-file", token_path}, 20s);
  EXPECT_EQ(with.exit_code, 0) << with.output;

  for (auto& node : nodes) node->send_signal(SIGTERM);
  auto results = ddplaunch::testing::wait_all(nodes, kJobBound);
  std::filesystem::remove_all(dir);
}

}  // namespace
