// Interactive debugging with real launchers, real gloo DDP workers and a real pseudo-terminal
// as the person's terminal: a rank of any node stops in pdb and is answered at the terminal
// that started the job; several stopped ranks share one console; quitting ends the job;
// a held rank is never judged hung; stdin piped into ddplaunch still reaches the workers.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
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

const std::string kPython = PYTHON_WITH_TORCH;
const std::string kScript = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/ddp_breakpoint.py";
constexpr auto kStopBound = 90s;  // torch's import and gloo's init on a loaded 2-core machine

class DebugConsoleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!dt::torch_available(kPython)) GTEST_SKIP() << kPython << " cannot import torch.distributed";
    dir_ = dt::temp_dir("debug-console-");
  }
  // The common flags: no history (deadlines must not depend on earlier runs).
  std::vector<std::string> flags() const { return {"--history-file", "off", "--grace", "2"}; }
  std::string dir_;
};

std::vector<std::string> program() { return {kPython, kScript}; }

// `ddplaunch FLAGS -- PROGRAM` on one node.
std::vector<std::string> one_node_argv(std::vector<std::string> argv, const std::vector<std::string>& flags) {
  argv.insert(argv.begin(), DDPLAUNCH_BIN);
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  for (const auto& p : program()) argv.push_back(p);
  return argv;
}

// Types `command` at the console (Enter) and expects `answer` in what follows.
void expect_answer(dt::TerminalProcess& t, const std::string& command, const std::string& answer) {
  const std::size_t mark = t.output_size();
  t.type(command + "\r");
  EXPECT_TRUE(t.wait_for_output(answer, 15s, mark)) << "after `" << command << "`:\n" << t.output();
}

// Node 0 on the terminal, node 1 in the background; both of `job`.
struct TwoNodes {
  dt::TerminalProcess node0;
  std::unique_ptr<dt::BackgroundProcess> node1;
};

// With the job's token: a node relays its ranks' debuggers only to a master that proved it.
void start_two_nodes(TwoNodes& nodes, const dt::MultiNodeJob& job, std::map<std::string, std::string> env) {
  env.emplace("DDPLAUNCH_TOKEN", "debug-console-two-nodes-token-2b7e41");
  ASSERT_TRUE(nodes.node0.start(dt::node_argv(job, 0, 2, {}, program()), env, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(nodes.node0.wait_for_output("hosting the rendezvous", 20s)) << nodes.node0.output();
  nodes.node1 = std::make_unique<dt::BackgroundProcess>();
  ASSERT_TRUE(nodes.node1->start(dt::node_argv(job, 1, 2, {}, program()), env, dt::kLauncherEnvToUnset));
}

}  // namespace

// The basic scenario: breakpoint() on rank 3 = local rank 1 of node 1; node 0's
// terminal gets the announcement and rank 3's pdb; `p secret` prints its local; `c` ends it.
TEST_F(DebugConsoleTest, BreakpointOnSecondNodeIsAnsweredAtNodeZerosTerminal) {
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "dbg-two-nodes", flags());
  TwoNodes nodes;
  start_two_nodes(nodes, job, {{"BP_RANKS", "3"}});
  ASSERT_TRUE(nodes.node0.wait_for_output("rank 3 (Pdb) ", kStopBound)) << nodes.node0.output();
  const std::string screen = nodes.node0.output();
  EXPECT_TRUE(std::regex_search(screen, std::regex(R"(rank 3 \(local 1, node 1, host \S+, pid \d+\) stopped at ddp_breakpoint\.py:\d+ in stop_here)")))
      << screen;
  expect_answer(nodes.node0, "p secret", "1032");  // 1000 + 10 x 3 + step 2
  nodes.node0.type("c\r");
  dt::RunResult r0 = nodes.node0.wait(60s);
  dt::RunResult r1 = nodes.node1->wait(60s);
  EXPECT_EQ(r0.exit_code, 0) << r0.output;
  EXPECT_EQ(r1.exit_code, 0) << r1.output;
  EXPECT_NE(r0.output.find("job succeeded"), std::string::npos) << r0.output;
  EXPECT_NE(r1.output.find("[node 1 rank 3] rank 3 finished"), std::string::npos) << r1.output;
}

// Two ranks stop at once: no race for keystrokes. The first is attached, the second waits;
// `:list` shows both; `:cast all p secret` reaches both; `:continue` resumes both.
TEST_F(DebugConsoleTest, TwoStoppedRanksAreListedCastToAndContinued) {
  dt::TerminalProcess t;
  std::vector<std::string> argv = one_node_argv({"--nproc-per-node", "2"}, flags());
  ASSERT_TRUE(t.start(argv, {{"BP_RANKS", "0,1"}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output(" (Pdb) ", kStopBound)) << t.output();
  ASSERT_TRUE(t.wait_for_output("`:attach ", 20s)) << t.output();  // the other one is announced waiting
  std::size_t mark = t.output_size();
  t.type(":list\r");
  ASSERT_TRUE(t.wait_for_output("stopped for", 10s, mark)) << t.output();
  const std::string listing = t.output().substr(mark);
  EXPECT_TRUE(std::regex_search(listing, std::regex(R"(\n\*?\s+0\s+0 \S+\s+\d+  ddp_breakpoint\.py:\d+ in stop_here)"))) << listing;
  EXPECT_TRUE(std::regex_search(listing, std::regex(R"(\n\*?\s+1\s+0 \S+\s+\d+  ddp_breakpoint\.py:\d+ in stop_here)"))) << listing;
  mark = t.output_size();
  t.type(":cast all p secret\r");
  EXPECT_TRUE(t.wait_for_output("1002", 10s, mark)) << t.output();  // rank 0
  EXPECT_TRUE(t.wait_for_output("1012", 10s, mark)) << t.output();  // rank 1
  t.type(":continue\r");
  dt::RunResult r = t.wait(60s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("continued rank(s) 0-1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 0 finished"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 1 finished"), std::string::npos) << r.output;
}

// `q` asks once; "n" keeps the rank stopped; `q` again and "y" ends the job on every node with
// that root cause, exit status 1, nothing restarted (even with --max-restarts), nothing left.
TEST_F(DebugConsoleTest, QuitAsksOnceThenEndsTheJobOnEveryNode) {
  std::vector<std::string> f = flags();
  f.insert(f.end(), {"--max-restarts", "2"});
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "dbg-quit", f);
  TwoNodes nodes;
  start_two_nodes(nodes, job, {{"BP_RANKS", "2"}});
  ASSERT_TRUE(nodes.node0.wait_for_output("rank 2 (Pdb) ", kStopBound)) << nodes.node0.output();
  std::size_t mark = nodes.node0.output_size();
  nodes.node0.type("q\r");
  ASSERT_TRUE(nodes.node0.wait_for_output("end the job on every node (rank 2 quit the debugger)? [y/N] ", 10s, mark))
      << nodes.node0.output();
  mark = nodes.node0.output_size();
  nodes.node0.type("n\r");
  ASSERT_TRUE(nodes.node0.wait_for_output("not quitting: rank 2 stays stopped", 10s, mark)) << nodes.node0.output();
  ASSERT_TRUE(nodes.node0.wait_for_output("rank 2 (Pdb) ", 10s, mark)) << nodes.node0.output();
  nodes.node0.type("q\r");
  ASSERT_TRUE(nodes.node0.wait_for_output("[y/N] ", 10s, mark)) << nodes.node0.output();
  nodes.node0.type("y\r");
  const auto started = std::chrono::steady_clock::now();
  dt::RunResult r0 = nodes.node0.wait(30s);
  dt::RunResult r1 = nodes.node1->wait(30s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);  // the grace (2 s) and the stop, not a timeout
  EXPECT_EQ(r0.exit_code, 1) << r0.output;
  EXPECT_EQ(r1.exit_code, 1) << r1.output;
  EXPECT_TRUE(std::regex_search(r0.output, std::regex(R"(root cause: rank 2 \(local rank 0\) on node 1 .*quit its debugger \(`q` at the console\))")))
      << r0.output;
  EXPECT_EQ(r0.output.find("restarting"), std::string::npos) << r0.output;
  EXPECT_EQ(r0.output.find("rank 0 finished"), std::string::npos) << r0.output;
  EXPECT_FALSE(dt::process_alive(nodes.node0.pid()));
}

// A rank held in pdb far longer than the hang and init deadlines (set to seconds) is not
// judged: no suspect, no hang, `status` says "debugging"; after `c` the watch works again and
// a later real hang (rank 0 stalls) is caught.
TEST_F(DebugConsoleTest, HeldRankIsNeverJudgedAndTheWatchResumesAfterContinue) {
  dt::TerminalProcess t;
  const int port = dt::free_tcp_port();
  std::vector<std::string> argv = one_node_argv(
      {"--nproc-per-node", "2", "--nodes", "1", "--node-rank", "0", "--master", "127.0.0.1:" + std::to_string(port),
       "--job-id", "dbg-held-" + std::to_string(port),
       "--hang-suspect-floor", "3", "--hang-minimum", "6", "--set", "hang.warmup_steps=1", "--set", "timeout.base_s=5",
       "--set", "timeout.min_s=5"},
      flags());
  ASSERT_TRUE(t.start(argv, {{"BP_RANKS", "1"}, {"BP_STEP", "3"}, {"STEPS", "40"}, {"STEP_SLEEP", "0.1"},
                             {"STALL_RANK", "0"}, {"STALL_STEP", "30"}},
                      dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 1 (Pdb) ", kStopBound)) << t.output();
  const std::size_t held_from = t.output_size();
  // Held 12 s: twice the hang deadline, four times the suspect floor.
  std::this_thread::sleep_for(4s);
  // Found by its job record: no --master needed on the job's node.
  dt::RunResult status = dt::run_command({DDPLAUNCH_BIN, "status", "--job", "dbg-held-" + std::to_string(port)}, 20s, {},
                                         dt::kLauncherEnvToUnset);
  EXPECT_TRUE(std::regex_search(status.output, std::regex(R"(\n\s*1 .*debugging)"))) << status.output;
  std::this_thread::sleep_for(8s);
  const std::string held = t.output().substr(held_from);
  EXPECT_EQ(held.find("suspect:"), std::string::npos) << held;
  EXPECT_EQ(held.find("hang:"), std::string::npos) << held;
  EXPECT_TRUE(dt::process_alive(t.pid()));
  t.type("c\r");
  // Rank 0 stalls at step 30: the watch, freshly timed, catches it and the job stops.
  dt::RunResult r = t.wait(90s);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("rank 0 stalls at step 30"), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(root cause: rank 0 .*made no progress past the hang deadline)")))
      << r.output;
}

// `ddplaunch debug` on another terminal of the job's node: found by the job record, it proves
// the job's token and drives the console; without the token it is refused, and says so.
TEST_F(DebugConsoleTest, SecondTerminalAttachesWithTheTokenAndIsRefusedWithout) {
  const std::string token = "debug-console-test-token-5f3a9c";
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "dbg-second-terminal-" + std::to_string(::getpid()), flags());
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
  for (int node = 0; node < 2; ++node) {
    nodes.push_back(std::make_unique<dt::BackgroundProcess>());
    ASSERT_TRUE(nodes.back()->start(dt::node_argv(job, node, 2, {}, program()),
                                    {{"BP_RANKS", "1"}, {"DDPLAUNCH_TOKEN", token}}, dt::kLauncherEnvToUnset));
    if (node == 0) {
      ASSERT_TRUE(dt::wait_listening(*nodes.back()));
    }
  }
  // No terminal started the job: node 0 says how to reach the console.
  ASSERT_TRUE(nodes[0]->wait_for_output("from another terminal, `ddplaunch debug --job " + job.job_id, kStopBound))
      << nodes[0]->output_so_far();
  dt::RunResult refused = dt::run_command({DDPLAUNCH_BIN, "debug", "--job", job.job_id}, 30s, {}, dt::kLauncherEnvToUnset);
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("cannot reach the debug console"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("token"), std::string::npos) << refused.output;

  dt::TerminalProcess console;
  std::map<std::string, std::string> env{{"DDPLAUNCH_TOKEN", token}};
  ASSERT_TRUE(console.start({DDPLAUNCH_BIN, "debug", "--job", job.job_id}, env, {"DDPLAUNCH_TOKEN"}));
  ASSERT_TRUE(console.wait_for_output("rank 1 (Pdb) ", 30s)) << console.output();
  expect_answer(console, "p secret", "1012");
  console.type("c\r");
  std::vector<dt::RunResult> results = dt::wait_all(nodes, 60s);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(results[0].output.find("[another terminal] p secret"), std::string::npos) << results[0].output;
  dt::RunResult left = console.wait(20s);  // the job ended: the console client ends too
  EXPECT_EQ(left.exit_code, 0) << left.output;
  EXPECT_NE(left.output.find("the job has ended"), std::string::npos) << left.output;
}

// The reopened-/dev/stdin recipe (ForkedPdb) and torch.distributed.breakpoint's pattern
// (rank 0 in such a Pdb, the others waiting in a barrier) both reach the console.
TEST_F(DebugConsoleTest, ReopenedStdinAndDistributedBreakpointPatternsWork) {
  for (const std::string style : {"reopen_stdin", "dist_breakpoint"}) {
    SCOPED_TRACE(style);
    dt::TerminalProcess t;
    std::vector<std::string> argv = one_node_argv({"--nproc-per-node", "2"}, flags());
    ASSERT_TRUE(t.start(argv, {{"BP_RANKS", "0"}, {"BP_STYLE", style}}, dt::kLauncherEnvToUnset));
    ASSERT_TRUE(t.wait_for_output("rank 0 (Pdb) ", kStopBound)) << t.output();
    expect_answer(t, "p secret", "1002");
    t.type("c\r");
    dt::RunResult r = t.wait(60s);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("rank 1 finished"), std::string::npos) << r.output;
  }
}

// Line editing is the console's: a typo fixed with Backspace and the arrow keys, then the
// history (Up) recalls the last command; pdb only ever sees the finished lines. The console's
// `:list` and `:help` answer there and the rank's prompt is drawn again below them.
TEST_F(DebugConsoleTest, LineEditingAndHistoryHappenAtTheConsole) {
  dt::TerminalProcess t;
  std::vector<std::string> argv = one_node_argv({"--nproc-per-node", "1"}, flags());
  ASSERT_TRUE(t.start(argv, {{"BP_RANKS", "0"}, {"BP_STYLE", "set_trace"}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 0 (Pdb) ", kStopBound)) << t.output();
  std::size_t mark = t.output_size();
  // "p secXret", then Left x3 and Backspace (the X), End, Enter: pdb receives "p secret".
  t.type("p secXret" "\x1b[D\x1b[D\x1b[D" "\x7f" "\x1b[F" "\r");
  ASSERT_TRUE(t.wait_for_output("1002", 10s, mark)) << t.output();
  mark = t.output_size();
  t.type("\x1b[A\r");  // Up: the same command again
  ASSERT_TRUE(t.wait_for_output("1002", 10s, mark)) << t.output();
  EXPECT_EQ(t.output().find("\x1b[A", mark), std::string::npos);  // no escape code echoed raw
  // The console's own commands answer below the prompt, and the rank's prompt comes back.
  for (const auto& [command, answer] : {std::pair<std::string, std::string>{":list", "stopped for"},
                                        std::pair<std::string, std::string>{":help", "anything else"}}) {
    mark = t.output_size();
    t.type(command + "\r");
    ASSERT_TRUE(t.wait_for_output(answer, 10s, mark)) << command << "\n" << t.output();
    const std::size_t answered = t.output().find(answer, mark) + answer.size();
    EXPECT_TRUE(t.wait_for_output("rank 0 (Pdb) ", 10s, answered)) << "no prompt after `" << command << "`:\n"
                                                                   << t.output().substr(mark);
  }
  t.type("c\r");
  dt::RunResult r = t.wait(60s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// Data piped into ddplaunch is the workers' stdin, as under torchrun (their shared stdin).
TEST_F(DebugConsoleTest, PipedDataReachesTheWorkerAsUnderTorchrun) {
  const std::string shell = "printf 'hello from stdin\\n' | " + std::string(DDPLAUNCH_BIN) +
                            " --nproc-per-node 1 --history-file off -- " + kPython +
                            " -c 'print(\"read:\", input())'";
  dt::RunResult r = dt::run_command({"/bin/sh", "-c", shell}, 60s, {}, dt::kLauncherEnvToUnset);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[rank 0] read: hello from stdin"), std::string::npos) << r.output;
}

// --post-mortem: a rank's uncaught exception stops it in pdb at the raising frame (its locals
// inspectable), the group is held; `c` ends the job as it would have, with the same root cause.
TEST_F(DebugConsoleTest, PostMortemStopsAtTheRaisingFrameThenEndsWithTheSameRootCause) {
  const std::string script = dir_ + "/raises.py";
  {
    std::ofstream out(script);
    out << "import os\n"
           "rank = int(os.environ['RANK'])\n"
           "def parse(value):\n"
           "    limit = 10 + rank\n"
           "    if rank == 1:\n"
           "        raise ValueError('bad value %d' % value)\n"
           "    return value\n"
           "parse(5)\n"
           "print('rank', rank, 'parsed', flush=True)\n";
  }
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start({DDPLAUNCH_BIN, "--nproc-per-node", "2", "--post-mortem", "--history-file", "off", "--", kPython, script},
                      {}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 1 (Pdb) ", kStopBound)) << t.output();
  EXPECT_TRUE(std::regex_search(t.output(), std::regex(R"(rank 1 \(local 1, node 0, host \S+, pid \d+\) raised ValueError at raises\.py:6 in parse)")))
      << t.output();
  expect_answer(t, "p limit + 100", "111");
  t.type("c\r");
  dt::RunResult r = t.wait(30s);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(root cause: rank 1 .*ValueError: bad value 5)"))) << r.output;
}

// --post-mortem in a gloo job: rank 1's ValueError stops it; rank 0 waits in the step's
// all_reduce. `c` at rank 1 is the person's decision to let the job end: rank 0's follow-on
// gloo error is not announced as another stop, and the root cause shows rank 1's traceback
// (the lines before its pdb session), not the session.
TEST_F(DebugConsoleTest, AfterAPostMortemContinueFollowOnFailuresAreNoStopsAndTheTracebackIsTheRootCause) {
  const std::string script = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/bad_batch.py";
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start({DDPLAUNCH_BIN, "--nproc-per-node", "2", "--post-mortem", "--history-file", "off", "--grace", "2",
                       "--", kPython, script},
                      {}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 1 (Pdb) ", kStopBound)) << t.output();
  expect_answer(t, "p step", "6");
  const std::size_t decided = t.output_size();
  t.type("c\r");
  dt::RunResult r = t.wait(60s);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string after = r.output.substr(std::min(decided, r.output.size()));
  EXPECT_FALSE(std::regex_search(after, std::regex(R"(rank 0 \(local 0, node 0, host \S+, pid \d+\) )")))
      << "a follow-on failure was announced as a stop:\n" << after;
  EXPECT_EQ(after.find("attached to rank 0"), std::string::npos) << after;
  EXPECT_EQ(after.find("rank 0 (Pdb)"), std::string::npos) << after;
  const std::size_t root = r.output.find("JOB FAILED — root cause: rank 1");
  ASSERT_NE(root, std::string::npos) << r.output;
  const std::string report = r.output.substr(root);
  EXPECT_NE(report.find("ValueError: bad batch at step 6"), std::string::npos) << report;
  EXPECT_TRUE(std::regex_search(report, std::regex(R"(\| Traceback \(most recent call last\):)"))) << report;
  EXPECT_TRUE(std::regex_search(report, std::regex(R"(\| ValueError: bad batch at step 6)"))) << report;
  EXPECT_EQ(report.find("(Pdb)"), std::string::npos) << "the root cause shows the pdb session:\n" << report;
  EXPECT_EQ(report.find("post-mortem: raised"), std::string::npos) << report;
}

// breakpoint() in a forked child of the rank (as in a DataLoader worker): the stop names the
// child's pid, the process that stopped, not the rank's; `stacks` reads the rank itself (it
// is not in its debugger, only its child is).
TEST_F(DebugConsoleTest, AStopInAChildNamesTheChildsPidAndStacksStillReadTheRank) {
  const std::string script = dir_ + "/child_stops.py";
  {
    std::ofstream out(script);
    out << "import multiprocessing, os\n"
           "def child():\n"
           "    print('CHILD PID %d' % os.getpid(), flush=True)\n"
           "    secret = 4343\n"
           "    breakpoint()\n"
           "    print('child continued', flush=True)\n"
           "process = multiprocessing.get_context('fork').Process(target=child)\n"
           "process.start()\n"
           "process.join()\n"
           "print('rank pid %d: child exited %d' % (os.getpid(), process.exitcode), flush=True)\n";
  }
  const std::string job_id = "child-stop-" + std::to_string(::getpid());
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start({DDPLAUNCH_BIN, "--nproc-per-node", "1", "--job-id", job_id, "--history-file", "off", "--", kPython,
                       script},
                      {}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 0 (Pdb) ", kStopBound)) << t.output();
  std::smatch child;
  const std::string shown = t.output();
  ASSERT_TRUE(std::regex_search(shown, child, std::regex(R"(CHILD PID (\d+))"))) << shown;
  EXPECT_NE(shown.find("rank 0 (local 0, node 0, host "), std::string::npos) << shown;
  EXPECT_TRUE(std::regex_search(shown, std::regex(R"(rank 0 \(local 0, node 0, host \S+, pid )" + child[1].str() + R"(\))")))
      << "the stop does not name the child's pid " << child[1] << ":\n" << shown;
  dt::RunResult stacks = dt::run_command({DDPLAUNCH_BIN, "stacks", "--job", job_id}, 60s, {}, dt::kLauncherEnvToUnset);
  EXPECT_EQ(stacks.output.find("in its debugger, held by a person"), std::string::npos)
      << "the rank is called held while only its child is:\n" << stacks.output;
  expect_answer(t, "p secret", "4343");
  t.type("c\r");
  dt::RunResult r = t.wait(30s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("child exited 0"), std::string::npos) << r.output;
}

#ifdef TRAIN_BINARY_BIN
// A native worker wedged for good (train_binary's rank 1 stalls): `:attach 1 --gdb` typed at
// the launching terminal while no rank is stopped runs gdb on its node; `bt` shows its frames
// through the console; `c` detaches gdb and the rank is no longer held.
TEST_F(DebugConsoleTest, GdbOnANativeWedgedRankThroughTheConsole) {
  if (dt::run_command({"gdb", "--version"}, 20s).exit_code != 0) GTEST_SKIP() << "gdb is not installed";
  dt::TerminalProcess t;
  const int port = dt::free_tcp_port();
  const std::string job_id = "dbg-gdb-" + std::to_string(port);
  ASSERT_TRUE(t.start({DDPLAUNCH_BIN, "--nproc-per-node", "2", "--nodes", "1", "--node-rank", "0", "--master",
                       "127.0.0.1:" + std::to_string(port), "--job-id", job_id, "--history-file", "off", "--",
                       TRAIN_BINARY_BIN, "--steps", "100000", "--stall-rank", "1", "--stall-after", "3"},
                      {}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 1 stalls after step 3", kStopBound)) << t.output();
  std::size_t mark = t.output_size();
  t.type(":attach 1 --gdb\r");
  ASSERT_TRUE(t.wait_for_output("rank 1 (gdb) ", 60s, mark)) << t.output();
  EXPECT_NE(t.output().find("rank 1 (local 1, node 0, host ", mark), std::string::npos) << t.output();
  dt::RunResult status = dt::run_command({DDPLAUNCH_BIN, "status", "--job", job_id}, 20s, {}, dt::kLauncherEnvToUnset);
  EXPECT_TRUE(std::regex_search(status.output, std::regex(R"(\n\s*1 .*debugging)"))) << status.output;
  mark = t.output_size();
  t.type("bt\r");
  ASSERT_TRUE(t.wait_for_output("in main (", 30s, mark)) << t.output();
  EXPECT_NE(t.output().find("stall_forever", mark), std::string::npos) << t.output();
  mark = t.output_size();
  t.type("c\r");
  EXPECT_TRUE(t.wait_for_output("gdb detaches from rank 1", 20s, mark)) << t.output();
  EXPECT_TRUE(t.wait_for_output("detached", 20s, mark)) << t.output();
  t.type("\x03");  // Ctrl-C: the job stops as always
  dt::RunResult r = t.wait(30s);
  EXPECT_FALSE(r.timed_out) << r.output;
}
#endif

// No terminal started the job (a batch job) and nobody attaches: a forgotten breakpoint()
// does not hold the job until its walltime; the rank continues after the bound, and node 0
// said how to attach meanwhile.
TEST_F(DebugConsoleTest, AnUnattendedStopIsContinuedAfterTheBound) {
  std::vector<std::string> argv = one_node_argv({"--nproc-per-node", "2", "--unattended-stop-timeout", "3"}, flags());
  dt::RunResult r = dt::run_command(argv, 120s, {{"BP_RANKS", "1"}}, dt::kLauncherEnvToUnset);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no terminal here to answer it: from another terminal, `ddplaunch debug --job"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("nobody attached to the debug console within 3 s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 1 finished"), std::string::npos) << r.output;
}

// A program's own lines that look like pdb's location lines are held back only for a moment
// (they become a stop's when a prompt follows): without a prompt they are printed, in order.
TEST_F(DebugConsoleTest, LinesThatLookLikePdbsArePrintedWhenNoPromptFollows) {
  dt::RunResult r = dt::run_command(
      {DDPLAUNCH_BIN, "--nproc-per-node", "1", "--history-file", "off", "--", kPython, "-c",
       "import time; print('> /x/y.py(3)f()', flush=True); print('-> z = 1', flush=True); time.sleep(0.5); "
       "print('after', flush=True); print('> /x/y.py(4)g()', flush=True)"},
      60s, {}, dt::kLauncherEnvToUnset);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::size_t first = r.output.find("[rank 0] > /x/y.py(3)f()");
  const std::size_t code = r.output.find("[rank 0] -> z = 1");
  const std::size_t after = r.output.find("[rank 0] after");
  const std::size_t last = r.output.find("[rank 0] > /x/y.py(4)g()");  // the last line, at the end of output
  ASSERT_NE(first, std::string::npos) << r.output;
  ASSERT_NE(code, std::string::npos) << r.output;
  ASSERT_NE(after, std::string::npos) << r.output;
  ASSERT_NE(last, std::string::npos) << r.output;
  EXPECT_LT(first, code);
  EXPECT_LT(code, after);
  EXPECT_LT(after, last);
}
