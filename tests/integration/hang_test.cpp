// Runtime hangs, with real workers: a rank that stops making progress is suspect
// (reported with every rank's stack, the stuck one first) and, at the hang deadline, the job
// stops with a root cause naming it; a long checkpoint inside a section and slow but regular
// steps raise no alarm; `ddplaunch stacks` on a healthy 2-node job; the run history seeds
// the next run's deadlines. Deadlines are set short by flags; no assertion is about time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "launcher_test_env.h"
#include "multi_node_job.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const std::string kScript = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/hang_ddp.py";

bool python_has_torch() { return dt::torch_available(PYTHON_WITH_TORCH); }

struct TempDir {
  std::string path = dt::temp_dir("hang-test-");
  ~TempDir() { fs::remove_all(path); }
};

// Short deadlines for a test: suspect after 6 s without progress (above the reporting lag of
// a few seconds), hang after 15 s.
std::vector<std::string> short_deadlines(const std::string& dir) {
  return {"--hang-suspect-floor", "6", "--hang-minimum", "15", "--history-file", dir + "/history"};
}

dt::RunResult run_one_node(int nproc, const std::vector<std::string>& flags, const std::vector<std::string>& program) {
  std::vector<std::string> argv{DDPLAUNCH_BIN, "--standalone", "--nproc-per-node", std::to_string(nproc), "--grace", "1"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return dt::run_command(argv, 240s, {}, {"PYTHONUNBUFFERED"});
}

std::vector<std::string> python_script(const std::vector<std::string>& args) {
  std::vector<std::string> program{PYTHON_WITH_TORCH, kScript};
  program.insert(program.end(), args.begin(), args.end());
  return program;
}

std::string stacks_file_in(const std::string& dir) {
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().rfind("stacks-", 0) == 0) {
      std::ifstream in(entry.path());
      return std::string(std::istreambuf_iterator<char>(in), {});
    }
  return "";
}

}  // namespace

TEST(HangDetection, PythonRankThatStopsIsSuspectWithStacksThenTheJobStops) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  TempDir dir;
  auto flags = short_deadlines(dir.path);
  flags.insert(flags.end(), {"--log-dir", dir.path});
  dt::RunResult r = run_one_node(2, flags, python_script({"--mode", "stall", "--rank", "1", "--after", "10"}));
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  // Suspect first (reported only), with the stacks of both ranks, file and line.
  EXPECT_NE(r.output.find("suspect: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("only reported: nothing is stopped"), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(rank 1 \(STUCK\): stall_here\(\) at hang_ddp\.py:\d+)")))
      << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(rank 0: \S+ ← main\(\) at hang_ddp\.py:\d+)"))) << r.output;
  EXPECT_NE(r.output.find("likely stuck: rank 1"), std::string::npos) << r.output;
  // Then the hang deadline: the job stops (no restarts asked), the root cause names rank 1.
  EXPECT_NE(r.output.find("hang: "), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(root cause: rank 1 .*made no progress past the hang deadline)")))
      << r.output;
  EXPECT_NE(stacks_file_in(dir.path).find("stall_here"), std::string::npos) << "no stacks file in --log-dir";
}

#ifdef TRAIN_BINARY_BIN
// A program with no optimizer and no DDP, only torch.distributed collectives: each completed
// collective is progress, so the rank that stops before its next all_reduce is found like a
// trainer's (suspect with the stacks, the stuck rank named by file and line; then the stop).
TEST(HangDetection, APlainAllReduceLoopIsWatchedAndItsStuckRankNamed) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  TempDir dir;
  const std::string script = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/allreduce_loop.py";
  dt::RunResult r = run_one_node(
      3, short_deadlines(dir.path),
      {PYTHON_WITH_TORCH, script, "--steps", "400", "--pause", "0.05", "--stall-rank", "1", "--stall-after", "60"});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 1 stalls"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("suspect: "), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(rank 1 \(STUCK\): stall_forever\(\) at allreduce_loop\.py:\d+)")))
      << r.output;
  // Whichever rank's report crossed a limit first, the stacks single out rank 1.
  EXPECT_EQ(r.output.find("(STUCK: 0)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("likely stuck: rank 1"), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(root cause: rank 1 .*made no progress past the hang deadline)")))
      << r.output;
  EXPECT_EQ(r.output.find("without any sign of progress"), std::string::npos) << "its ranks made progress: " << r.output;
}

// `ddplaunch status` shows each rank's steps and last progress, and marks the suspect rank,
// so the stuck one is visible in the table and not only in the log.
TEST(HangDetection, StatusShowsStepsProgressAndTheSuspectRank) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  TempDir dir;
  const std::string script = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/allreduce_loop.py";
  const int port = dt::free_tcp_port();
  std::vector<std::string> argv{DDPLAUNCH_BIN, "--nproc-per-node", "2", "--nodes", "1", "--node-rank", "0", "--master",
                                "127.0.0.1:" + std::to_string(port), "--grace", "1", "--hang-suspect-floor", "4",
                                "--hang-minimum", "600", "--history-file", dir.path + "/history", "--log-dir",
                                dir.path + "/logs", "--", PYTHON_WITH_TORCH, script, "--steps", "100000", "--pause",
                                "0.05", "--stall-rank", "1",
                                "--stall-after", "40"};
  dt::BackgroundProcess job;
  ASSERT_TRUE(job.start(argv, {}, {"PYTHONUNBUFFERED"}));
  ASSERT_TRUE(job.wait_for_output("suspect: ", 120s)) << job.output_so_far();
  std::string status;
  for (int i = 0; i < 20 && !std::regex_search(status, std::regex(R"(\n1\s+0\s+\S+\s+\d+\s+suspect\s)")); ++i) {
    status = dt::run_command({DDPLAUNCH_BIN, "status", "--master", "127.0.0.1:" + std::to_string(port)}, 20s).output;
    std::this_thread::sleep_for(500ms);
  }
  // rank node host pid state inits steps compute progress for ("-": no compute share measured
  // yet, else "37 %", "90 % slow" for a straggler)
  EXPECT_TRUE(std::regex_search(status, std::regex(R"(\n1\s+0\s+\S+\s+\d+\s+suspect\s+\d+\s+\d+\s+(-|\d+ %( slow)?)\s+\d[^\n]* ago)")))
      << status;
  EXPECT_TRUE(std::regex_search(status, std::regex(R"(\nrank\s+node\s+host\s+pid\s+state\s+inits\s+steps\s+compute\s+progress\s+for\s+log)")))
      << status;
  // Each rank's log file, each node's generation, the learnt step interval in the heading.
  EXPECT_NE(status.find(dir.path + "/logs/rank_1.log"), std::string::npos) << status;
  EXPECT_TRUE(std::regex_search(status, std::regex(R"(learnt step (\d|-))"))) << status;
  EXPECT_TRUE(std::regex_search(status, std::regex(R"(\nnode\s+host\s+address\s+nproc\s+rtt_ms\s+gen\s)"))) << status;
  // The same for scripts: one JSON object, the suspect rank's state and steps in it.
  const std::string json =
      dt::run_command({DDPLAUNCH_BIN, "status", "--json", "--master", "127.0.0.1:" + std::to_string(port)}, 20s).output;
  EXPECT_TRUE(std::regex_search(json, std::regex(R"(\{"compute_share":(null|[0-9.e+-]+),"cpu_cores":(null|[0-9.e+-]+),"host":"[^"]*","in_state_s":[0-9.e+-]+,"inits":\d+,"log_file":"[^"]*/logs/rank_1\.log","node":0,"pid":\d+,"progress_age_s":[0-9.e+-]+,"rank":1,"state":"suspect","steps":[1-9]\d*,"straggler":false\})")))
      << json;
  EXPECT_TRUE(std::regex_search(json, std::regex(R"("generation":0,"host")"))) << json;
  EXPECT_NE(json.find("\"phase\":\"running\""), std::string::npos) << json;
  job.send_signal(SIGTERM);
  job.wait(60s);
}

// `ddplaunch status --watch` redraws the table every second while the job runs and ends by
// itself when the job ends.
TEST(StatusCommand, WatchRefreshesUntilTheJobEnds) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  TempDir dir;
  const std::string script = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/allreduce_loop.py";
  const int port = dt::free_tcp_port();
  const std::string master = "127.0.0.1:" + std::to_string(port);
  dt::BackgroundProcess job;
  ASSERT_TRUE(job.start({DDPLAUNCH_BIN, "--nproc-per-node", "2", "--nodes", "1", "--node-rank", "0", "--master", master,
                         "--history-file", dir.path + "/history", "--", PYTHON_WITH_TORCH, script, "--steps", "100",
                         "--pause", "0.05"},
                        {}, {"PYTHONUNBUFFERED"}));
  ASSERT_TRUE(job.wait_for_output("starting 2 worker(s)", 60s)) << job.output_so_far();
  dt::RunResult watch = dt::run_command({DDPLAUNCH_BIN, "status", "--watch", "--master", master}, 120s);
  dt::RunResult r = job.wait(60s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_FALSE(watch.timed_out) << watch.output;
  EXPECT_EQ(watch.exit_code, 0) << watch.output;
  EXPECT_GE(dt::count_of(watch.output, "\nrank "), 2) << "redrawn while the job ran:\n" << watch.output;
  EXPECT_NE(watch.output.find("the job has ended"), std::string::npos) << watch.output;
}

// Ranks that run without any sign of progress are not judged, and the launcher says so once,
// naming them and what counts as progress; the job itself is left alone and succeeds.
TEST(HangDetection, RanksWithoutAnyProgressAreSaidOnceNotJudged) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  TempDir dir;
  const std::string script = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/allreduce_loop.py";
  dt::RunResult r =
      run_one_node(2, short_deadlines(dir.path), {PYTHON_WITH_TORCH, script, "--silent", "--steps", "200", "--pause", "0.1"});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(hang watch: ranks 0, 1 have run .* without any sign of progress)")))
      << r.output;
  std::size_t said = 0;
  for (std::size_t at = r.output.find("without any sign of progress"); at != std::string::npos;
       at = r.output.find("without any sign of progress", at + 1))
    ++said;
  EXPECT_EQ(said, 1u) << r.output;
  EXPECT_EQ(r.output.find("suspect: "), std::string::npos) << r.output;
}

TEST(HangDetection, CxxTrainerRankThatStopsIsNamedWithNativeStacks) {
  if (access("/usr/bin/eu-stack", X_OK) != 0)
    GTEST_SKIP() << "eu-stack is not installed (apt-get install elfutils; scripts/install-deps.sh does)";
  TempDir dir;
  auto flags = short_deadlines(dir.path);
  flags.insert(flags.end(), {"--hang-action", "stop"});
  dt::RunResult r = run_one_node(2, flags, {TRAIN_BINARY_BIN, "--steps", "100000", "--stall-rank", "1", "--stall-after", "20"});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(rank 1 \(STUCK\): \S+ ← stall_forever\(\) at train_binary\.cpp:\d+)")))
      << r.output;
  EXPECT_NE(r.output.find("[eu-stack;"), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(root cause: rank 1 .*made no progress past the hang deadline)")))
      << r.output;
}

// A C++ program that never calls shim::step() (its steps are only collectives, as a parameter
// server's or a benchmark's): the shim's process group counts each completed collective, so
// the stuck rank is found and named all the same.
TEST(HangDetection, CxxProgramWithoutStepsIsWatchedThroughItsCollectives) {
  TempDir dir;
  auto flags = short_deadlines(dir.path);
  flags.insert(flags.end(), {"--hang-action", "stop"});
  dt::RunResult r = run_one_node(2, flags, {TRAIN_BINARY_BIN, "--steps", "100000", "--no-steps", "--stall-rank", "1",
                                            "--stall-after", "20"});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("suspect: "), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(root cause: rank 1 .*made no progress past the hang deadline)")))
      << r.output;
  EXPECT_EQ(r.output.find("without any sign of progress"), std::string::npos) << "its collectives are progress: " << r.output;
}
#endif

TEST(HangDetection, LongCheckpointInsideASectionIsNoFalseAlarm) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  TempDir dir;
  // Rank 0 checkpoints for 20 s: beyond both short deadlines outside a section; rank 1 waits.
  dt::RunResult r = run_one_node(
      2, short_deadlines(dir.path), python_script({"--mode", "checkpoint", "--after", "5", "--seconds", "20", "--steps", "15"}));
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(dt::count_of(r.output, "suspect: "), 0) << r.output;
  EXPECT_EQ(dt::count_of(r.output, "FINAL rank="), 2) << r.output;
}

TEST(HangDetection, SlowButRegularStepsAreNeverSuspect) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  TempDir dir;
  // 3 s steps against an 8 s floor: after one warm-up step the learnt deadline is 5 x 3 s.
  std::vector<std::string> flags{"--hang-suspect-floor", "8", "--hang-minimum", "20", "--history-file", "off",
                                 "--set", "hang.warmup_steps=1"};
  const int port = dt::free_tcp_port();
  std::vector<std::string> argv{DDPLAUNCH_BIN, "--nnodes", "1", "--nproc-per-node", "2", "--master",
                                "127.0.0.1:" + std::to_string(port), "--grace", "1"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  for (const auto& a : python_script({"--mode", "slow", "--seconds", "3", "--steps", "8"})) argv.push_back(a);
  dt::BackgroundProcess job;
  ASSERT_TRUE(job.start(argv, {}, {"PYTHONUNBUFFERED"}));
  // `ddplaunch status` shows the deadline learnt from the steps, and where it came from.
  std::string status;
  for (int i = 0; i < 60 && status.find("seen in this run") == std::string::npos; ++i) {
    std::this_thread::sleep_for(1s);
    status = dt::run_command({DDPLAUNCH_BIN, "status", "--master", "127.0.0.1:" + std::to_string(port)}, 20s).output;
  }
  EXPECT_TRUE(std::regex_search(status, std::regex(R"(hang deadlines: suspect after 1\d s without progress)"))) << status;
  EXPECT_NE(status.find("seen in this run"), std::string::npos) << status;
  dt::RunResult r = job.wait(120s);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(dt::count_of(r.output, "suspect: "), 0) << r.output;
}

TEST(StacksCommand, HealthyTwoNodeJobShowsEveryRanksStack) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "stacks-job", {"--token", "s3cret", "--history-file", "off"});
  const auto program = python_script({"--mode", "slow", "--seconds", "0.3", "--steps", "60"});
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
  nodes.push_back(dt::start_node(dt::node_argv(job, 0, 1, {}, program)));
  ASSERT_TRUE(dt::wait_listening(*nodes[0]));
  nodes.push_back(dt::start_node(dt::node_argv(job, 1, 1, {}, program)));
  ASSERT_TRUE(nodes[0]->wait_for_output("all 2 ranks finished init", 90s)) << nodes[0]->output_so_far();
  dt::RunResult stacks = dt::run_command(
      {DDPLAUNCH_BIN, "stacks", "--master", job.master(), "--job-id", "stacks-job", "--token", "s3cret"}, 60s);
  EXPECT_EQ(stacks.exit_code, 0) << stacks.output;
  EXPECT_NE(stacks.output.find("stacks of 2 rank(s)"), std::string::npos) << stacks.output;
  EXPECT_TRUE(std::regex_search(stacks.output, std::regex(R"(ranks? 0(,1|-1)?: .*at hang_ddp\.py:\d+)"))) << stacks.output;
  EXPECT_NE(stacks.output.find("node 1"), std::string::npos) << stacks.output;
  // Without the token the master answers nothing.
  dt::RunResult refused =
      dt::run_command({DDPLAUNCH_BIN, "stacks", "--master", job.master(), "--job-id", "stacks-job", "--token", "wrong"}, 60s);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_EQ(refused.output.find("stacks of"), std::string::npos) << refused.output;
  // A storm of requests interrupts the ranks once per 5 s at most; the
  // others are answered with the latest round's stacks (asserted loosely: fewer rounds than
  // requests; the exact rule is unit-tested in tests/unit/policy/stacks_query_test.cpp).
  constexpr int kStorm = 10;
  for (int i = 0; i < kStorm; ++i) {
    dt::RunResult again = dt::run_command(
        {DDPLAUNCH_BIN, "stacks", "--master", job.master(), "--job-id", "stacks-job", "--token", "s3cret"}, 60s);
    EXPECT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("stacks of 2 rank(s)"), std::string::npos) << again.output;
  }
  auto results = dt::wait_all(nodes, 120s);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << r.output;
  const int rounds = dt::count_of(results[0].output, "stacks taken on request");
  EXPECT_GE(rounds, 1) << results[0].output;
  EXPECT_LT(rounds, 1 + kStorm) << "every request interrupted the ranks\n" << results[0].output;
}

// Without a token, anyone reaching a multi-node job's port could interrupt every rank at
// will: `ddplaunch stacks` is refused there, saying how to allow it.
TEST(StacksCommand, ATokenlessMultiNodeJobRefusesStacks) {
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "stacks-notoken", {"--history-file", "off"});
  const std::vector<std::string> program{FAKE_WORKER_BIN, "--report-init", "--sleep-ms", "4000"};
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
  nodes.push_back(dt::start_node(dt::node_argv(job, 0, 1, {}, program)));
  ASSERT_TRUE(dt::wait_listening(*nodes[0]));
  nodes.push_back(dt::start_node(dt::node_argv(job, 1, 1, {}, program)));
  ASSERT_TRUE(nodes[0]->wait_for_output("all 2 ranks finished init", 60s)) << nodes[0]->output_so_far();
  dt::RunResult stacks =
      dt::run_command({DDPLAUNCH_BIN, "stacks", "--master", job.master(), "--job-id", "stacks-notoken"}, 60s);
  EXPECT_NE(stacks.exit_code, 0) << stacks.output;
  EXPECT_NE(stacks.output.find("has no rendezvous token"), std::string::npos) << stacks.output;
  EXPECT_NE(stacks.output.find("DDPLAUNCH_TOKEN"), std::string::npos) << stacks.output;
  auto results = dt::wait_all(nodes, 60s);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(dt::count_of(results[0].output, "stacks taken on request"), 0) << results[0].output;
}

TEST(RunHistory, RecordsEachRunAndSeedsTheNextRunsDeadlines) {
  if (!python_has_torch()) GTEST_SKIP() << PYTHON_WITH_TORCH << " cannot import torch (install python3-torch)";
  TempDir dir;
  const std::string history = dir.path + "/history";
  // 1.5 s steps: the learnt interval; three runs make a seed (RunHistory::kMinSamples).
  std::vector<std::string> flags{"--hang-suspect-floor", "5", "--history-file", history, "--set", "hang.warmup_steps=1"};
  const auto program = python_script({"--mode", "slow", "--seconds", "1.5", "--steps", "5"});
  std::string first_output;
  // Two ranks: their init (gloo connecting the pair) takes measurable time; one rank's alone
  // can round to 0.000 s in the history file, which seeds no init deadline.
  for (int run = 1; run <= 3; ++run) {
    dt::RunResult r = run_one_node(2, flags, program);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    if (run == 1) first_output = r.output;
    std::ifstream in(history);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    EXPECT_EQ(lines, run) << "the history file has one record per run";
  }
  EXPECT_TRUE(std::regex_search(first_output, std::regex(R"(hang detection: suspect after 5\.0 s without progress)")))
      << first_output;
  dt::RunResult seeded = run_one_node(2, flags, program);
  EXPECT_EQ(seeded.exit_code, 0) << seeded.output;
  // 5 x the recorded step (about 1.5 s) now, from history, and the init deadline says so too.
  EXPECT_TRUE(std::regex_search(seeded.output, std::regex(R"(hang detection: suspect after [6-9]\.\d s without progress)")))
      << seeded.output;
  EXPECT_TRUE(std::regex_search(seeded.output, std::regex(R"(hang detection: .*history: p99 of 3 run)"))) << seeded.output;
  EXPECT_TRUE(std::regex_search(seeded.output, std::regex(R"(init deadline .*history)"))) << seeded.output;
}
