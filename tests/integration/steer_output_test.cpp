// Output you can steer while the job runs, with real launchers on 127.0.0.1: the console's
// `:ranks` typed at node 0's terminal (a real pseudo-terminal) changes what every node's
// terminal shows (log files keep every rank); `ddplaunch tail --rank R` from another terminal
// follows a rank of another node through the master, with the job's token, and ends with the
// job; a multi-node job without a token does not relay its ranks' output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "launcher_test_env.h"
#include "multi_node_job.h"
#include "process_runner.h"
#include "terminal_process.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> kProgram{"/usr/bin/python3",
                                        std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/steer_output.py"};
constexpr auto kBound = 90s;

struct TempDir {
  std::string path = dt::temp_dir("steer-output-test-");
  ~TempDir() { fs::remove_all(path); }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void touch(const std::string& path) { std::ofstream(path) << "go\n"; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(OutputSteering, TheConsolesRanksCommandChangesWhatEveryNodeShowsNotTheLogFiles) {
  TempDir dir;
  const std::string flag = dir.path + "/go";
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "steer-ranks-" + std::to_string(::getpid()));
  const std::map<std::string, std::string> env{{"STEER_FLAG", flag}};
  dt::TerminalProcess node0;
  ASSERT_TRUE(node0.start(dt::node_argv(job, 0, 2, {"--log-dir", dir.path + "/logs0"}, kProgram), env,
                          dt::kLauncherEnvToUnset));
  ASSERT_TRUE(node0.wait_for_output("hosting the rendezvous", 30s)) << node0.output();
  dt::BackgroundProcess node1;
  ASSERT_TRUE(node1.start(dt::node_argv(job, 1, 2, {"--log-dir", dir.path + "/logs1"}, kProgram), env,
                          dt::kLauncherEnvToUnset));
  ASSERT_TRUE(node0.wait_for_output("rank 1 before 3", kBound)) << node0.output();
  ASSERT_TRUE(node1.wait_for_output("rank 2 before 3", kBound)) << node1.output_so_far();

  // Typed at the launching terminal with no prompt up: a ':' line is the console's.
  const std::size_t mark = node0.output_size();
  node0.type(":ranks 3\r");
  ASSERT_TRUE(node0.wait_for_output("the terminal shows only rank(s) 3 from now on", 20s, mark)) << node0.output();
  touch(flag);
  dt::RunResult ended0 = node0.wait(kBound);
  dt::RunResult ended1 = node1.wait(kBound);
  ASSERT_FALSE(ended0.timed_out) << ended0.output;
  ASSERT_FALSE(ended1.timed_out) << ended1.output;
  EXPECT_EQ(ended0.exit_code, 0) << ended0.output;
  EXPECT_EQ(ended1.exit_code, 0) << ended1.output;
  const std::string shown0 = node0.output(), shown1 = ended1.output;
  // Every node hides the other ranks from then on; rank 3 (node 1) is still shown.
  for (const char* hidden : {"rank 0 after", "rank 1 after"}) EXPECT_FALSE(contains(shown0.substr(mark), hidden)) << shown0;
  EXPECT_FALSE(contains(shown1, "rank 2 after")) << shown1;
  for (int n = 0; n < 5; ++n) EXPECT_TRUE(contains(shown1, "rank 3 after " + std::to_string(n))) << shown1;
  // The log files keep every rank.
  EXPECT_TRUE(contains(read_file(dir.path + "/logs0/rank_0.log"), "rank 0 after 4"));
  EXPECT_TRUE(contains(read_file(dir.path + "/logs1/rank_2.log"), "rank 2 after 4"));
}

TEST(OutputSteering, TailFollowsARankOfAnotherNodeWithTheTokenUntilTheJobEnds) {
  TempDir dir;
  const std::string flag = dir.path + "/go";
  const std::string token = "steer-output-tail-token-7d1e2b";
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "steer-tail-" + std::to_string(::getpid()));
  const std::map<std::string, std::string> env{{"STEER_FLAG", flag}, {"DDPLAUNCH_TOKEN", token}};
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
  for (int node = 0; node < 2; ++node) {
    nodes.push_back(std::make_unique<dt::BackgroundProcess>());
    ASSERT_TRUE(nodes.back()->start(dt::node_argv(job, node, 2, {}, kProgram), env, dt::kLauncherEnvToUnset));
    if (node == 0) ASSERT_TRUE(dt::wait_listening(*nodes.back()));
  }
  ASSERT_TRUE(nodes[1]->wait_for_output("rank 2 before 2", kBound)) << nodes[1]->output_so_far();

  // Without the token: refused, saying why.
  dt::RunResult refused = dt::run_command({DDPLAUNCH_BIN, "tail", "--job", job.job_id, "--rank", "2"}, 30s, {},
                                          dt::kLauncherEnvToUnset);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_TRUE(contains(refused.output, "token")) << refused.output;
  // A rank the job does not have.
  dt::RunResult no_such = dt::run_command({DDPLAUNCH_BIN, "tail", "--job", job.job_id, "--rank", "9"}, 30s,
                                          {{"DDPLAUNCH_TOKEN", token}}, dt::kLauncherEnvToUnset);
  EXPECT_EQ(no_such.exit_code, 2) << no_such.output;
  EXPECT_TRUE(contains(no_such.output, "there is no rank 9 in this job (ranks 0-3)")) << no_such.output;

  dt::BackgroundProcess tail;
  ASSERT_TRUE(tail.start({DDPLAUNCH_BIN, "tail", "--job", job.job_id, "--rank", "2"}, {{"DDPLAUNCH_TOKEN", token}},
                         dt::kLauncherEnvToUnset));
  ASSERT_TRUE(tail.wait_for_output("rank 2 before", 30s)) << tail.output_so_far();
  touch(flag);
  for (auto& node : nodes) {
    dt::RunResult r = node->wait(kBound);
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  dt::RunResult followed = tail.wait(30s);  // the job ended: so does the tail
  ASSERT_FALSE(followed.timed_out) << followed.output;
  EXPECT_EQ(followed.exit_code, 0) << followed.output;
  for (int n = 0; n < 5; ++n) EXPECT_TRUE(contains(followed.output, "rank 2 after " + std::to_string(n))) << followed.output;
  EXPECT_TRUE(contains(followed.output, "the job has ended")) << followed.output;
  for (const char* other : {"rank 0 ", "rank 1 ", "rank 3 "}) EXPECT_FALSE(contains(followed.output, other)) << followed.output;
}

TEST(OutputSteering, ATypoInTheRanksCommandSaysWhatToType) {
  TempDir dir;
  const std::string flag = dir.path + "/go";
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start({DDPLAUNCH_BIN, "--standalone", "--nproc-per-node", "2", "--", kProgram[0], kProgram[1]},
                      {{"STEER_FLAG", flag}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 1 before 2", kBound)) << t.output();
  const std::size_t mark = t.output_size();
  t.type(":ranks five\r");
  EXPECT_TRUE(t.wait_for_output("ranks needs the global ranks to show, e.g. `:ranks 5,8-11`", 20s, mark)) << t.output();
  t.type(":ranks 1\r");
  EXPECT_TRUE(t.wait_for_output("the terminal shows only rank(s) 1", 20s, mark)) << t.output();
  t.type(":ranks all\r");
  EXPECT_TRUE(t.wait_for_output("every rank's output is shown again", 20s, mark)) << t.output();
  touch(flag);
  dt::RunResult r = t.wait(kBound);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "rank 0 after 4")) << r.output;  // shown again after `:ranks all`
}
