// torchrun's output options with the real binary: -r/--redirects (streams to the rank's log
// file only), -t/--tee (file and terminal), per-rank lists, a log directory made for -r/-t
// without --log-dir, and the join progress line: live on a terminal (a pty from Python's pty
// module), plain lines otherwise.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "launcher_test_env.h"
#include "output_parsing.h"
#include "process_runner.h"
#include "terminal_process.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;
using std::chrono::seconds;

namespace {

constexpr auto kRunLimit = seconds(120);
// Each rank writes one line to stdout and one to stderr.
const std::vector<std::string> kTwoStreams = {"/bin/sh", "-c", "echo OUT-$RANK; echo ERR-$RANK >&2"};

dt::RunResult run_launcher(std::vector<std::string> args) {
  args.insert(args.begin(), DDPLAUNCH_BIN);
  args.push_back("--");
  args.insert(args.end(), kTwoStreams.begin(), kTwoStreams.end());
  return dt::run_command(args, kRunLimit, {}, {"PYTHONUNBUFFERED"});
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(OutputOptions, RedirectSendsAStreamOnlyToTheLogFile) {
  const std::string dir = dt::temp_dir("ddpl-redirect-");
  dt::RunResult r = run_launcher({"--nproc-per-node", "2", "--log-dir", dir, "-r", "1"});
  const std::string rank0 = read_file(dir + "/rank_0.log"), rank1 = read_file(dir + "/rank_1.log");
  fs::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string n = std::to_string(rank);
    EXPECT_FALSE(has(r.output, "[rank " + n + "] OUT-" + n)) << "stdout was redirected, not shown:\n" << r.output;
    EXPECT_TRUE(has(r.output, "[rank " + n + "] ERR-" + n)) << r.output;
  }
  EXPECT_TRUE(has(rank0, "\nOUT-0\n")) << rank0;
  EXPECT_FALSE(has(rank0, "ERR-0")) << "stderr was neither redirected nor teed:\n" << rank0;
  EXPECT_TRUE(has(rank1, "\nOUT-1\n")) << rank1;
}

// The root cause of a failed rank names the file that holds its whole output (the terminal
// shows only its last lines).
TEST(OutputOptions, TheRootCauseNamesTheFailedRanksLogFile) {
  const std::string dir = dt::temp_dir("ddpl-root-log-");
  dt::RunResult r = dt::run_command({DDPLAUNCH_BIN, "--nproc-per-node", "2", "--log-dir", dir, "--", "/bin/sh", "-c",
                                     "echo working-$RANK; if [ $RANK = 1 ]; then exit 3; fi; sleep 1"},
                                    kRunLimit, {}, {"PYTHONUNBUFFERED"});
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("root cause: rank 1 ")));
  EXPECT_TRUE(has(r.output, "its whole output: " + dir + "/rank_1.log on ")) << r.output;
}

TEST(OutputOptions, TeeForOneRankWithoutLogDirMakesADirectory) {
  dt::RunResult r = run_launcher({"--nproc-per-node", "2", "--tee", "0:3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("the workers' log files go to (\\S+)"))) << r.output;
  const std::string dir = m[1];
  ASSERT_EQ(dir.rfind("/tmp/ddplaunch-logs-", 0), 0u) << dir;
  const std::string rank0 = read_file(dir + "/rank_0.log");
  const bool rank1_file = fs::exists(dir + "/rank_1.log");
  fs::remove_all(dir);
  // Teed: shown and filed; rank 1 is not in the list: shown only.
  for (const char* line : {"[rank 0] OUT-0", "[rank 0] ERR-0", "[rank 1] OUT-1", "[rank 1] ERR-1"})
    EXPECT_TRUE(has(r.output, line)) << line << "\n" << r.output;
  EXPECT_TRUE(has(rank0, "\nOUT-0\n")) << rank0;
  EXPECT_TRUE(has(rank0, "\n[err] ERR-0\n")) << rank0;
  EXPECT_FALSE(rank1_file) << "rank 1 has no stream to file";
}

TEST(OutputOptions, LocalRanksFilterHidesOthersFromTheTerminalOnly) {
  const std::string dir = dt::temp_dir("ddpl-filter-");
  dt::RunResult r = run_launcher({"--nproc-per-node", "2", "--log-dir", dir, "--local-ranks-filter", "1"});
  const std::string rank0 = read_file(dir + "/rank_0.log");
  fs::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(has(r.output, "[rank 0] OUT-0")) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 1] OUT-1")) << r.output;
  EXPECT_TRUE(has(rank0, "\nOUT-0\n")) << rank0;
}

// Node 0 of a two-node job whose node 1 never comes: the wait is shown, then the join timeout.
namespace {
std::vector<std::string> lonely_master_argv() {
  const int port = dt::free_tcp_port();
  return {DDPLAUNCH_BIN, "--nnodes", "2", "--node-rank", "0", "--master", "127.0.0.1:" + std::to_string(port),
          "--join-timeout", "5", "--no-peer-probe", "--", "/bin/true"};
}
}  // namespace

// Four ranks printing the same lines, with --collapse-output auto (the default): on a terminal
// each identical line is printed once, naming the ranks; a line that differs (its rank number)
// is each rank's own; --no-collapse and a pipe keep every copy.
TEST(OutputOptions, IdenticalLinesOfSeveralRanksPrintOnceOnATerminal) {
  const std::vector<std::string> program{
      "/bin/sh", "-c", "echo 'Loading dataset ... done'; echo \"step of rank $RANK\"; echo 'Training finished'"};
  auto on_pty = [&](std::vector<std::string> flags) {
    std::vector<std::string> argv{"/usr/bin/python3", "-c",
                                  "import pty, sys; status = pty.spawn(sys.argv[1:]); "
                                  "sys.exit(status >> 8 if status & 0xff == 0 else 1)",
                                  DDPLAUNCH_BIN, "--nproc-per-node", "4"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("--");
    argv.insert(argv.end(), program.begin(), program.end());
    return dt::run_command(argv, kRunLimit, {}, {"PYTHONUNBUFFERED"});
  };
  auto count = [](const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  dt::RunResult collapsed = on_pty({"--collapse-output", "auto"});
  ASSERT_EQ(collapsed.exit_code, 0) << collapsed.output;
  EXPECT_EQ(count(collapsed.output, "[ranks 0-3] Training finished"), 1u) << collapsed.output;
  EXPECT_EQ(count(collapsed.output, "[ranks 0-3] Loading dataset ... done"), 1u) << collapsed.output;
  EXPECT_EQ(count(collapsed.output, "Training finished"), 1u) << collapsed.output;
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_TRUE(has(collapsed.output, "[rank " + std::to_string(rank) + "] step of rank " + std::to_string(rank)))
        << collapsed.output;
  dt::RunResult every = on_pty({"--collapse-output", "auto", "--no-collapse"});
  dt::RunResult by_default = on_pty({});
  ASSERT_EQ(by_default.exit_code, 0) << by_default.output;
  EXPECT_EQ(count(by_default.output, "[ranks 0-3] Training finished"), 1u) << "auto by default: " << by_default.output;
  ASSERT_EQ(every.exit_code, 0) << every.output;
  EXPECT_EQ(count(every.output, "Training finished"), 4u) << every.output;
  dt::RunResult piped = dt::run_command({DDPLAUNCH_BIN, "--nproc-per-node", "4", "--", program[0], program[1],
                                         program[2]},
                                        kRunLimit, {}, {"PYTHONUNBUFFERED"});
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_EQ(count(piped.output, "Training finished"), 4u) << "a pipe keeps every rank's line: " << piped.output;
  EXPECT_TRUE(has(piped.output, "[rank 2] Training finished")) << piped.output;
}

// The common log shape: every rank prints an identical line and at once its own ("all ready",
// then "loss 0.12N"), step after step, all of it in one write. The ranks meet at a file barrier first, as they would at a collective, so
// the window sees them together. With the default (auto): on a real pseudo-terminal each
// "all ready" is printed once naming ranks 0-3, every rank's loss line shown; through a pipe
// every rank's line is kept, as torchrun prints them.
TEST(OutputOptions, TheCommonLogShapeCollapsesOnATerminalAndStaysWholeOnAPipe) {
  const std::string dir = dt::temp_dir("ddpl-shape-");
  const std::string script =
      "import os, sys, time\n"
      "rank, barrier = os.environ['RANK'], sys.argv[1]\n"
      "open(os.path.join(barrier, rank), 'w').close()\n"
      "deadline = time.monotonic() + 60\n"
      "while len(os.listdir(barrier)) < 4 and time.monotonic() < deadline: time.sleep(0.002)\n"
      "sys.stdout.write(''.join('all ready\\nloss 0.12' + rank + '\\n' for step in range(3)))\n";
  auto program = [&](const std::string& barrier) {
    fs::create_directories(barrier);
    return std::vector<std::string>{DDPLAUNCH_BIN, "--nproc-per-node", "4", "--", "/usr/bin/python3", "-c", script,
                                    barrier};
  };
  auto count = [](const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  dt::TerminalProcess terminal;
  ASSERT_TRUE(terminal.start(program(dir + "/pty"), {}, dt::kLauncherEnvToUnset));
  dt::RunResult collapsed = terminal.wait(kRunLimit);
  dt::RunResult piped = dt::run_command(program(dir + "/pipe"), kRunLimit, {}, dt::kLauncherEnvToUnset);
  fs::remove_all(dir);

  ASSERT_FALSE(collapsed.timed_out) << collapsed.output;
  ASSERT_EQ(collapsed.exit_code, 0) << collapsed.output;
  EXPECT_EQ(count(collapsed.output, "[ranks 0-3] all ready"), 3u) << collapsed.output;
  EXPECT_EQ(count(collapsed.output, "all ready"), 3u) << collapsed.output;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string own = "[rank " + std::to_string(rank) + "] loss 0.12" + std::to_string(rank);
    EXPECT_EQ(count(collapsed.output, own), 3u) << own << "\n" << collapsed.output;
  }
  ASSERT_FALSE(piped.timed_out) << piped.output;
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_EQ(count(piped.output, "[ranks "), 0u) << "a pipe keeps every rank's line: " << piped.output;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string n = std::to_string(rank);
    EXPECT_EQ(count(piped.output, "[rank " + n + "] all ready"), 3u) << piped.output;
    EXPECT_EQ(count(piped.output, "[rank " + n + "] loss 0.12" + n), 3u) << piped.output;
  }
}

TEST(OutputOptions, JoinProgressIsOneLiveLineOnATerminal) {
  std::vector<std::string> argv{"/usr/bin/python3", "-c",
                                "import pty, sys; status = pty.spawn(sys.argv[1:]); "
                                "sys.exit(status >> 8 if status & 0xff == 0 else 1)"};
  auto launcher = lonely_master_argv();
  argv.insert(argv.end(), launcher.begin(), launcher.end());
  dt::RunResult r = dt::run_command(argv, kRunLimit);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  // Redrawn in place: carriage return + erase line, then the text with the seconds waited;
  // never a newline right after it (the next line erases it first).
  std::regex live("\r\x1b\\[2K[0-9:]+ ddplaunch: waiting for nodes: 1/2 joined \\(missing: [^)]*\\), [0-9]+ s");
  auto begin = std::sregex_iterator(r.output.begin(), r.output.end(), live);
  EXPECT_GE(std::distance(begin, std::sregex_iterator()), 1) << r.output;
  EXPECT_FALSE(std::regex_search(r.output, std::regex("joined \\(missing: [^)]*\\), [0-9]+ s\r?\n"))) << r.output;
  EXPECT_FALSE(has(r.output, "info: waiting for nodes")) << "a plain line on a terminal:\n" << r.output;
  EXPECT_TRUE(has(r.output, "node rank 1")) << r.output;
}

TEST(OutputOptions, JoinProgressIsPlainLinesOffATerminal) {
  dt::RunResult r = dt::run_command(lonely_master_argv(), kRunLimit);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_FALSE(has(r.output, "\x1b[2K")) << r.output;
  // Unchanged progress is not repeated every tick.
  EXPECT_EQ(dt::count_of(r.output, "info: waiting for nodes: 1/2 joined"), 1) << r.output;
}
