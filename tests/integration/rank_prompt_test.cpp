// A rank's own prompt is the person's, as under torchrun: real launchers, plain Python ranks
// (tests/integration/compat_scripts/rank_prompt.py) and a real pseudo-terminal as the
// launching terminal. input() is shown and answered there; getpass is answered without the
// secret on the screen; a line typed while nobody asks reaches rank 0 and says so; several
// ranks asking are answered in turn; with ddplaunch's stdin at end of file (/dev/null) a
// read ends at once, while a breakpoint() still waits for `ddplaunch debug`; a breakpoint()
// in a forked child of a rank (a DataLoader worker) is answered like the rank's own.
// RANK_PROMPT_TEST_LAUNCHER runs the same tests against another ddplaunch (an older build).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "launcher_test_env.h"
#include "multi_node_job.h"
#include "process_runner.h"
#include "terminal_process.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono_literals;

namespace {

const std::string kScript = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/rank_prompt.py";
constexpr auto kAskBound = 30s;  // two Python ranks started on a loaded 2-core machine

std::string launcher() {
  const char* other = std::getenv("RANK_PROMPT_TEST_LAUNCHER");
  return other && *other ? other : DDPLAUNCH_BIN;
}

// `ddplaunch --nproc-per-node 2 FLAGS -- python3 rank_prompt.py`.
std::vector<std::string> job_argv(const std::vector<std::string>& flags = {}) {
  std::vector<std::string> argv{launcher(), "--history-file", "off", "--grace", "2", "--nproc-per-node", "2"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--", "/usr/bin/python3", kScript});
  return argv;
}

// The job at the terminal ends by itself once answered.
void expect_success(dt::TerminalProcess& t) {
  dt::RunResult r = t.wait(60s);
  EXPECT_FALSE(r.timed_out) << t.output();
  EXPECT_EQ(r.exit_code, 0) << t.output();
}

// A rank stopped in pdb with `secret` = 4242: `p secret` answers it, `c` lets it run on to
// `after_continue`; the job then ends by itself, with no BdbQuit.
void answer_stop_and_continue(dt::TerminalProcess& t, const std::string& after_continue) {
  std::size_t mark = t.output_size();
  t.type("p secret\r");
  EXPECT_TRUE(t.wait_for_output("4242", 20s, mark)) << t.output();
  mark = t.output_size();
  t.type("c\r");
  EXPECT_TRUE(t.wait_for_output(after_continue, 30s, mark)) << t.output();
  expect_success(t);
  EXPECT_EQ(t.output().find("BdbQuit"), std::string::npos) << t.output();
}

}  // namespace

// Rank 0's input() question is on the terminal while the job runs (not after it is killed),
// and the typed answer is what input() returns.
TEST(RankPromptTest, RankZerosInputIsShownAndAnsweredAtTheTerminal) {
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start(job_argv(), {{"ASK", "input"}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("overwrite checkpoint? [y/N] ", kAskBound)) << t.output();
  const std::size_t mark = t.output_size();
  t.type("yes\r");
  EXPECT_TRUE(t.wait_for_output("rank 0 read 'yes'", 20s, mark)) << t.output();
  expect_success(t);
  EXPECT_NE(t.output().find("rank 1 finished"), std::string::npos) << t.output();
}

// getpass: the prompt is shown, the typed secret reaches the rank and never the screen (the
// rank has no terminal of its own; the console hides the typing and keeps it out of history).
TEST(RankPromptTest, GetpassIsAnsweredWithoutTheSecretOnTheScreen) {
  const std::string secret = "s3cr3t-tok";
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start(job_argv(), {{"ASK", "getpass"}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("token: ", kAskBound)) << t.output();
  const std::size_t mark = t.output_size();
  t.type(secret + "\r");
  EXPECT_TRUE(t.wait_for_output("read a token of 10 characters, reversed kot-t3rc3s", 20s, mark)) << t.output();
  expect_success(t);
  EXPECT_EQ(t.output().find(secret), std::string::npos) << "the secret was echoed:\n" << t.output();
}

// A rank that reads stdin without a prompt: a line typed at the terminal reaches rank 0, and
// the console says where it went (nobody asked).
TEST(RankPromptTest, ALineTypedWhileNoRankAsksGoesToRankZeroAndSaysSo) {
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start(job_argv(), {{"ASK", "readline"}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 1 finished", kAskBound)) << t.output();
  const std::size_t mark = t.output_size();
  t.type("hello\r");
  EXPECT_TRUE(t.wait_for_output("→ rank 0", 20s, mark)) << t.output();
  EXPECT_TRUE(t.wait_for_output("rank 0 read 'hello'", 20s, mark)) << t.output();
  expect_success(t);
}

// Two ranks ask at once: the latest prompt is answered first and the console names the rank;
// then the other's prompt is shown and answered.
TEST(RankPromptTest, TwoRanksAskingAreAnsweredInTurnAndNamed) {
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start(job_argv(), {{"ASK", "input"}, {"ASK_RANK", "all"}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("[rank 0] overwrite checkpoint? [y/N] ", kAskBound)) << t.output();
  ASSERT_TRUE(t.wait_for_output("[rank 1] overwrite checkpoint? [y/N] ", kAskBound)) << t.output();
  std::size_t mark = t.output_size();
  t.type("first\r");
  ASSERT_TRUE(t.wait_for_output("→ rank ", 20s, mark)) << t.output();
  std::smatch named;
  const std::string after = t.output().substr(mark);
  ASSERT_TRUE(std::regex_search(after, named, std::regex("→ rank (\\d)"))) << after;
  const std::string first = named[1], second = first == "0" ? "1" : "0";
  EXPECT_TRUE(t.wait_for_output("rank " + first + " read 'first'", 20s, mark)) << t.output();
  mark = t.output_size();
  t.type("second\r");
  EXPECT_TRUE(t.wait_for_output("rank " + second + " read 'second'", 20s, mark)) << t.output();
  expect_success(t);
}

// Two nodes on loopback, with the job's token: rank 3 (node 1) asks; the question is shown at
// node 0's terminal and the answer goes back through the same relay as a debugger's
// (debug_output, debug_input). Node 1 runs at a terminal of its own where nobody types (with
// its stdin at end of file its ranks would read end of file, as under torchrun).
TEST(RankPromptTest, ARankOnAnotherNodeIsAnsweredAtNodeZerosTerminal) {
  dt::MultiNodeJob job = dt::new_loopback_job(launcher(), 2, "rank-prompt-two-nodes", {"--history-file", "off"});
  const std::vector<std::string> program{"/usr/bin/python3", kScript};
  const std::string done_file = dt::temp_dir("rank-prompt-") + "/answered";
  const std::map<std::string, std::string> env{{"ASK", "input"},
                                               {"ASK_RANK", "3"},
                                               {"DONE_FILE", done_file},
                                               {"DDPLAUNCH_TOKEN", "rank-prompt-two-nodes-token-7c1d"}};
  dt::TerminalProcess node0;
  ASSERT_TRUE(node0.start(dt::node_argv(job, 0, 2, {}, program), env, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(node0.wait_for_output("hosting the rendezvous", 20s)) << node0.output();
  dt::TerminalProcess node1;
  ASSERT_TRUE(node1.start(dt::node_argv(job, 1, 2, {}, program), env, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(node0.wait_for_output("overwrite checkpoint? [y/N] ", kAskBound)) << node0.output();
  const std::size_t mark = node0.output_size();
  node0.type("y\r");
  dt::RunResult r1 = node1.wait(60s);
  EXPECT_EQ(r1.exit_code, 0) << r1.output;
  EXPECT_NE(r1.output.find("rank 3 read 'y'"), std::string::npos) << r1.output;
  EXPECT_EQ(node0.output().find("→ rank", mark), std::string::npos) << "only one rank asked:\n" << node0.output();
  expect_success(node0);
}

// stdin /dev/null (a batch job): input() raises EOFError at once, as under torchrun; the job
// does not hold its allocation waiting.
TEST(RankPromptTest, WithStdinAtEndOfFileInputRaisesEOFErrorAtOnce) {
  dt::RunResult r = dt::run_command(job_argv(), 60s, {{"ASK", "input"}}, dt::kLauncherEnvToUnset);  // stdin /dev/null
  ASSERT_FALSE(r.timed_out) << "input() waited with stdin at end of file:\n" << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::smatch took;
  ASSERT_TRUE(std::regex_search(r.output, took, std::regex(R"(rank 0: EOFError after ([0-9.]+) s)"))) << r.output;
  EXPECT_LT(std::stod(took[1]), 1.0) << r.output;
}

// stdin /dev/null: a program the rank starts with data on its stdin still reads that data
// (only the rank's own stdin is made /dev/null).
TEST(RankPromptTest, WithStdinAtEndOfFileAProgramTheRankStartsKeepsItsOwnStdin) {
  dt::RunResult r = dt::run_command(job_argv(), 60s, {{"ASK", "piped_child"}}, dt::kLauncherEnvToUnset);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 0: child read 'piped data'"), std::string::npos) << r.output;
}

// stdin /dev/null, but a breakpoint(): the rank still waits for a person, and `ddplaunch
// debug` from another terminal answers it (p, then c), as when no terminal started the job.
TEST(RankPromptTest, WithStdinAtEndOfFileABreakpointStillWaitsForDdplaunchDebug) {
  const std::string job_id = "rank-prompt-bp-" + std::to_string(::getpid());
  dt::BackgroundProcess job;  // stdin /dev/null
  ASSERT_TRUE(job.start(job_argv({"--job-id", job_id}), {{"ASK", "breakpoint"}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(job.wait_for_output("from another terminal, `ddplaunch debug --job " + job_id, kAskBound))
      << job.output_so_far();
  dt::TerminalProcess console;
  ASSERT_TRUE(console.start({launcher(), "debug", "--job", job_id}, {}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(console.wait_for_output("rank 0 (Pdb) ", 30s)) << console.output();
  const std::size_t mark = console.output_size();
  console.type("p secret\r");
  EXPECT_TRUE(console.wait_for_output("4242", 20s, mark)) << console.output();
  console.type("c\r");
  dt::RunResult r = job.wait(60s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 0 continued"), std::string::npos) << r.output;
  console.wait(20s);
}

// breakpoint() in a forked child of a rank (as a DataLoader worker is: multiprocessing gave it
// /dev/null as sys.stdin) stops at the terminal like the rank's own, instead of ending in
// BdbQuit; `c` lets the child finish.
TEST(RankPromptTest, ABreakpointInAForkedChildOfARankIsAnsweredLikeTheRanksOwn) {
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start(job_argv(), {{"ASK", "child_breakpoint"}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 0 (Pdb) ", kAskBound)) << t.output();
  answer_stop_and_continue(t, "rank 0: child exited 0");
  EXPECT_NE(t.output().find("rank 0's child continued"), std::string::npos) << t.output();
}

// The same in a real torch DataLoader worker.
TEST(RankPromptTest, ABreakpointInADataLoaderWorkerIsAnswered) {
  if (!dt::torch_available("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start(job_argv(), {{"ASK", "dataloader_breakpoint"}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 0 (Pdb) ", 90s)) << t.output();  // torch's import on a loaded machine
  answer_stop_and_continue(t, "rank 0: got batch [7]");
}
