// torchrun's scenarios, in the spirit of PyTorch's own torchrun tests: each
// launch line runs under Debian's torchrun and under ddplaunch side by side, and ddplaunch
// must end as torchrun does. Plus what a diagnosing launcher owes its user: a program's own
// error is named at once, never retried as "init" nor blamed on the network.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compat_runs.h"

namespace dt = ddplaunch::testing;
using namespace ddplaunch::testing::compat;
using dt::count_of;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// torchrun --max_restarts=2, odd ranks raising at once: three attempts in all, under both.
TEST(TorchrunScenarios, MaxRestartsTwoGivesThreeAttemptsWhenOddRanksRaise) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  std::vector<std::string> flags = standalone_two_workers();
  flags.push_back("--max_restarts=2");
  BothRuns b = run_both(ws, {flags, {}, {ws.script("odd_ranks_raise.py")}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_NE(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 1);
  EXPECT_EQ(count_of(b.torchrun.output, "ATTEMPT rank=1"), 3);
  // Counted as the worker printed it (the root cause quotes its last lines once more).
  EXPECT_EQ(count_of(b.ddplaunch.output, "[rank 1] ATTEMPT rank=1"), 3);
  // The setup failure spent --max-restarts, not the automatic init budget.
  const std::string cause = root_cause_section(b.ddplaunch.output);
  EXPECT_NE(cause.find("automatic init restarts 0 of"), std::string::npos) << cause;
  EXPECT_NE(cause.find("--max-restarts 2 of 2"), std::string::npos) << cause;
  EXPECT_NE(root_cause_section(b.ddplaunch.output).find("ValueError: odd rank 1 refuses to train"), std::string::npos);
}

// The everyday mistake: an import that fails in setup, no restarts asked. It ends at once,
// with the exception as the headline and no network advice — as torchrun, but explained.
TEST(TorchrunScenarios, AnImportErrorInSetupEndsAtOnceWithTheExceptionAsRootCause) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {standalone_two_workers(), {}, {ws.script("bad_import.py")}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_NE(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 1);
  EXPECT_FALSE(has_line_with(b.ddplaunch.output, "restarting the whole group", "not restarting"));
  const std::string cause = root_cause_section(b.ddplaunch.output);
  const std::string headline = cause.substr(0, cause.find('\n'));
  EXPECT_NE(headline.find("during setup"), std::string::npos) << headline;
  EXPECT_NE(headline.find("ModuleNotFoundError: No module named 'nonexistent_module_xyz'"), std::string::npos)
      << headline;
  EXPECT_EQ(cause.find("NCCL_SOCKET_IFNAME"), std::string::npos) << cause;
  EXPECT_EQ(cause.find("MASTER_ADDR"), std::string::npos) << cause;
}

// An outer agent's TORCHELASTIC_ERROR_FILE (TorchX, Kubeflow): torchrun's @record main copies
// the failed rank's error file there; ddplaunch does too, with the exit code.
TEST(TorchrunScenarios, TheOuterAgentsErrorFileGetsTheRootCause) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const std::string torchrun_file = ws.fresh_dir("outer-t") + "/error.json";
  const std::string ddplaunch_file = ws.fresh_dir("outer-d") + "/error.json";
  LaunchLine line{standalone_two_workers(), {}, {ws.script("record_error.py")}, {}};
  BothRuns b;
  line.env["TORCHELASTIC_ERROR_FILE"] = torchrun_file;
  run_torchrun(ws, line, b);
  line.env["TORCHELASTIC_ERROR_FILE"] = ddplaunch_file;
  run_ddplaunch(ws, line, b);
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_NE(b.ddplaunch.exit_code, 0);
  const std::string torchrun_json = read_file(torchrun_file), ddplaunch_json = read_file(ddplaunch_file);
  EXPECT_NE(torchrun_json.find("bad batch 42"), std::string::npos) << torchrun_json;
  EXPECT_NE(ddplaunch_json.find("bad batch 42"), std::string::npos) << ddplaunch_json;
  EXPECT_NE(ddplaunch_json.find("\"errorCode\":" + std::to_string(b.ddplaunch.exit_code)), std::string::npos)
      << ddplaunch_json;
  EXPECT_NE(ddplaunch_json.find("\"timestamp\""), std::string::npos) << ddplaunch_json;
  // The workers never wrote into the outer agent's file themselves: each had its own.
  EXPECT_EQ(b.ddplaunch.output.find(ddplaunch_file), std::string::npos) << "outer path passed on?";
}

// A failure without any error file still reaches the outer agent's file: the launcher's own
// root-cause line in torch's JSON shape (torchrun writes nothing then).
TEST(TorchrunScenarios, TheOuterErrorFileIsWrittenEvenWithoutAChildErrorFile) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const std::string file = ws.fresh_dir("outer") + "/error.json";
  LaunchLine line{standalone_two_workers(), {}, {ws.script("bad_import.py")}, {{"TORCHELASTIC_ERROR_FILE", file}}};
  BothRuns b;
  run_ddplaunch(ws, line, b);
  ReportOnFailure report(b);
  EXPECT_EQ(b.ddplaunch.exit_code, 1);
  const std::string json = read_file(file);
  EXPECT_NE(json.find("\"message\":{"), std::string::npos) << json;
  EXPECT_NE(json.find("during setup"), std::string::npos) << json;
  EXPECT_NE(json.find("nonexistent_module_xyz"), std::string::npos) << json;
  EXPECT_NE(json.find("\"errorCode\":1"), std::string::npos) << json;
}

// --nnodes=1:2 with one agent: the rendezvous completes with MIN after the last call; the join
// timeout bounds reaching MIN, not MAX.
TEST(TorchrunScenarios, ElasticRangeStartsWithOneNodeAfterTheLastCall) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  std::vector<std::string> flags{"--nnodes=1:2", "--nproc_per_node=2", "--rdzv_backend=c10d",
                                 "--rdzv_endpoint=localhost:" + std::to_string(port),
                                 "--rdzv_conf=join_timeout=5,last_call_timeout=1,timeout=5"};
  BothRuns b = run_both(ws, {flags, {}, {ws.script("hello.py")}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.ddplaunch.output, "world=2 sum=3.0"), 2);
}

// The same elastic line with a worker failure in the first attempt and --max_restarts=1: the
// group restarts (still one node after the last call) and trains.
TEST(TorchrunScenarios, ElasticRangeWithAWorkerFailureRestartsAndTrains) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  std::vector<std::string> flags{"--nnodes=1:2", "--nproc_per_node=2", "--max_restarts=1", "--rdzv_backend=c10d",
                                 "--rdzv_endpoint=localhost:" + std::to_string(port),
                                 "--rdzv_conf=join_timeout=5,last_call_timeout=1,timeout=5"};
  BothRuns b = run_both(ws, {flags, {}, {ws.script("elastic_flaky.py")}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.ddplaunch.output, "FAILING rank=1"), 1);
  EXPECT_EQ(count_of(b.ddplaunch.output, "ELASTIC DONE"), 2);
  EXPECT_EQ(count_of(b.ddplaunch.output, "world=2 restart=1"), 2);
}

// argparse's prefixes: --redirect=1 is --redirects=1 under both (Debian's torchrun 1.13
// crashes on the value 3 whatever the spelling, so the stdout-only value is used).
TEST(TorchrunScenarios, AnUnambiguousPrefixOfALongOptionIsAccepted) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const std::string logs = ws.fresh_dir("prefix-logs");
  std::vector<std::string> flags = standalone_two_workers();
  flags.insert(flags.end(), {"--redirect=1", "--log_dir", logs});
  BothRuns b = run_both(ws, {flags, {}, {ws.script("prefixed_lines.py")}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  // Redirected: the lines are in the files, not on the terminal.
  EXPECT_EQ(count_of(b.ddplaunch.output, "creating rank"), 0) << "not redirected";
  EXPECT_NE(read_file(logs + "/rank_1.log").find("creating rank 1"), std::string::npos);

  // --redirect=3 (stdout and stderr), under ddplaunch alone: torchrun 1.13
  // cannot run it at all. The stderr line reaches the file too.
  const std::string logs3 = ws.fresh_dir("prefix-logs-3");
  std::vector<std::string> flags3 = standalone_two_workers();
  flags3.insert(flags3.end(), {"--redirect=3", "--log_dir", logs3});
  BothRuns only;
  run_ddplaunch(ws, {flags3, {}, {ws.script("prefixed_lines.py"), "--stderr-too"}, {}}, only);
  EXPECT_EQ(only.ddplaunch.exit_code, 0) << only.ddplaunch.output;
  EXPECT_EQ(count_of(only.ddplaunch.output, "rank 1"), 0) << only.ddplaunch.output;
  const std::string file = read_file(logs3 + "/rank_1.log");
  EXPECT_NE(file.find("creating rank 1"), std::string::npos) << file;
  EXPECT_NE(file.find("stderr line of rank 1"), std::string::npos) << file;
}

// TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE is printed as given, then the line (no space added).
// Debian's torchrun (1.13) predates the variable, so only ddplaunch's output is checked
// against torchrun 2.x's rule.
TEST(TorchrunScenarios, TheLogLinePrefixTemplateIsPrintedAsGiven) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  LaunchLine line{standalone_two_workers(), {}, {ws.script("prefixed_lines.py")},
                  {{"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "[rank${rank}]: "}}};
  BothRuns b = run_both(ws, line);
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_NE(b.ddplaunch.output.find("\n[rank1]: creating rank 1\n"), std::string::npos);
  EXPECT_EQ(b.ddplaunch.output.find("[rank1]:  creating"), std::string::npos);
}

// init_method="tcp://localhost:P" with the command line's --master_port=P: P is the store's
// port under torchrun; ddplaunch's Python shim points it at rank 0's store, and it trains.
TEST(TorchrunScenarios, AnInitMethodOnTheCommandLinesMasterPortTrains) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  std::vector<std::string> flags{"--nnodes=1", "--nproc_per_node=2", "--master_addr=localhost",
                                 "--master_port=" + std::to_string(port)};
  BothRuns b = run_both(ws, {flags, {}, {ws.script("init_method_tcp.py"), std::to_string(port)}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.ddplaunch.output, "sum=3.0"), 2);
  EXPECT_EQ(b.ddplaunch.output.find("restarting the whole group"), std::string::npos);
}

// Without the shim nothing rewrites the init_method: the store client reaches the launcher's
// port. The job fails, but the root cause says what happened and what to write instead.
TEST(TorchrunScenarios, AStoreClientOnTheRendezvousPortIsNamedInTheRootCause) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  LaunchLine line{{"--nnodes=1", "--nproc_per_node=2", "--master_addr=localhost", "--master_port=" + std::to_string(port)},
                  {"--shim", "none", "--set", "restart.init_restarts=0"},
                  {ws.script("init_method_tcp.py"), std::to_string(port)},
                  {}};
  BothRuns b;
  run_ddplaunch(ws, line, b);
  ReportOnFailure report(b);
  EXPECT_FALSE(b.ddplaunch.timed_out);
  EXPECT_NE(b.ddplaunch.exit_code, 0);
  const std::string cause = root_cause_section(b.ddplaunch.output);
  EXPECT_NE(cause.find("c10d TCPStore client"), std::string::npos) << cause;
  EXPECT_NE(cause.find("MASTER_PORT"), std::string::npos) << cause;
}
