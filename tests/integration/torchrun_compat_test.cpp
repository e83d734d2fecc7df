// Drop-in compatibility with torchrun: each small PyTorch script of compat_scripts/ (gloo on CPU,
// two local workers) runs under Debian's torchrun and under ddplaunch with the same torchrun-style
// launch line; ddplaunch must end the same way or better, and must never kill a healthy job
// (slow setup, a rank-0 pause, buffered or directly executed programs) while still catching a
// real init hang. The environment case compares the torchrun contract variables of both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compat_runs.h"

namespace dt = ddplaunch::testing;
using namespace ddplaunch::testing::compat;
using dt::count_of;

namespace {

// The short init deadline, on the ddplaunch side only, for the cases where a deadline that
// started too early (or was handed to PyTorch) would kill a healthy job.
const std::vector<std::string> kShortDeadline{"--set", "timeout.base_s=3",     "--set", "timeout.min_s=3",
                                              "--set", "timeout.per_node_s=0", "--set", "timeout.max_s=3"};
// A workload outlasts the short deadline by this much.
const std::string kLongerThanDeadline = "8";

}  // namespace

// 1. Every rank spends longer in setup than ddplaunch's init deadline before it calls
// init_process_group: setup is unbounded, the deadline starts only once the last rank is in init.
TEST(TorchrunCompat, SlowSetupOnEveryRankIsNotAnInitHang) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {standalone_two_workers(), kShortDeadline,
                             {ws.script("slow_setup.py"), "all", kLongerThanDeadline}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.ddplaunch.output, "RESULT rank="), 2);
  EXPECT_EQ(count_of(b.ddplaunch.output, "sum=3.0"), 2);
}

// 2. Only rank 1 is slow in setup; rank 0 waits in init (the store) for it longer than the
// deadline. A rank waiting for a peer still in setup is healthy.
TEST(TorchrunCompat, SlowSetupOnOneRankWhileTheOtherWaitsInInit) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {standalone_two_workers(), kShortDeadline,
                             {ws.script("slow_setup.py"), "1", kLongerThanDeadline}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.ddplaunch.output, "sum=3.0"), 2);
}

// 3. Rank 0 pauses (evaluation, checkpoint) between two all_reduces for longer than the init
// deadline while rank 1 waits inside the collective: the deadline never shortens a collective.
TEST(TorchrunCompat, RankZeroPauseBetweenCollectivesDoesNotFail) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {standalone_two_workers(), kShortDeadline,
                             {ws.script("rank0_pause.py"), kLongerThanDeadline}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.ddplaunch.output, "sum=4.0"), 2);
}

// 4. A bash wrapper execs python with PYTHONUNBUFFERED unset; the program prints nothing until it
// exits, after ~6 s of DDP training. Silence is not a hang, and the shim is loaded into python
// even though the launcher started bash.
TEST(TorchrunCompat, BufferedWrapperScriptSucceeds) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  std::vector<std::string> flags = standalone_two_workers();
  flags.push_back("--no_python");
  BothRuns b = run_both(ws, {flags, kShortDeadline, {ws.script("buffered_wrapper.sh"), "6"}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.ddplaunch.output, "TRAINED rank="), 2);
  EXPECT_EQ(count_of(b.ddplaunch.output, "loading data"), 2);
}

// 5. A `#!/usr/bin/python3` script run directly (--no_python): it succeeds under both, and under
// ddplaunch the Python shim was loaded into it (the script prints whether module ddplaunch_shim
// is in sys.modules; there is no stable marker in ddplaunch's own output to check instead).
TEST(TorchrunCompat, ShebangScriptRunDirectlySucceeds) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  std::vector<std::string> flags = standalone_two_workers();
  flags.push_back("--no_python");
  BothRuns b = run_both(ws, {flags, kShortDeadline, {ws.script("direct_train.py"), "5"}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.ddplaunch.output, "TRAINED rank="), 2);
  EXPECT_EQ(count_of(b.ddplaunch.output, "SHIM_LOADED rank=0 True"), 1) << "shim not loaded into rank 0";
  EXPECT_EQ(count_of(b.ddplaunch.output, "SHIM_LOADED rank=1 True"), 1) << "shim not loaded into rank 1";
}

// 6. `-m compatpkg.train`: the program is a module found on PYTHONPATH, run as python -m.
TEST(TorchrunCompat, ModuleLaunchWithDashM) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  std::vector<std::string> flags = standalone_two_workers();
  flags.push_back("-m");
  BothRuns b = run_both(ws, {flags, {}, {"compatpkg.train"}, {{"PYTHONPATH", ws.scripts}}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.torchrun.output, "sum=3.0 module=compatpkg.train"), 2);
  EXPECT_EQ(count_of(b.ddplaunch.output, "sum=3.0 module=compatpkg.train"), 2);
}

// 7. @record writes rank 1's ValueError to TORCHELASTIC_ERROR_FILE; its stderr is closed, so
// only the error file carries the message. Both launchers fail alike, stop rank 0, and name the
// exception in the root cause.
TEST(TorchrunCompat, RecordedExceptionIsTheRootCause) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {standalone_two_workers(), {}, {ws.script("record_error.py")}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 1);
  EXPECT_EQ(b.ddplaunch.exit_code, b.torchrun.exit_code);
  EXPECT_NE(b.torchrun.output.find("bad batch 42"), std::string::npos) << "the script did not work under torchrun";
  EXPECT_LT(b.ddplaunch.seconds, 50.0) << "rank 0 was not stopped after rank 1 failed";
  const std::string cause = root_cause_section(b.ddplaunch.output);
  ASSERT_FALSE(cause.empty()) << "ddplaunch printed no root cause";
  EXPECT_NE(cause.find("rank 1"), std::string::npos) << cause;
  EXPECT_NE(cause.find("ValueError"), std::string::npos) << cause;
  EXPECT_NE(cause.find("bad batch 42"), std::string::npos) << cause;
}

// 8. torchrun's --max_restarts: rank 1 SIGKILLs itself at step 5 of the first run (a runtime
// failure, after init); the group restarts and resumes from the checkpoint to the planned 10 steps.
TEST(TorchrunCompat, MaxRestartsResumesFromCheckpoint) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  std::vector<std::string> flags = standalone_two_workers();
  flags.insert(flags.end(), {"--max_restarts", "2"});
  // Each launcher its own checkpoint: a shared one would let the second start from the first's end.
  BothRuns b;
  run_torchrun(ws, {flags, {}, {ws.script("checkpoint_resume.py"), ws.fresh_dir("ckpt-torchrun") + "/ckpt.pt", "10"}, {}},
               b);
  run_ddplaunch(ws,
                {flags, {}, {ws.script("checkpoint_resume.py"), ws.fresh_dir("ckpt-ddplaunch") + "/ckpt.pt", "10"}, {}},
                b);
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  for (const auto* r : {&b.torchrun, &b.ddplaunch}) {
    EXPECT_EQ(count_of(r->output, "restart=1 resumed_from=5 steps=10"), 2) << "no resume from step 5";
    EXPECT_EQ(count_of(r->output, "restart=0 resumed_from=0 steps=10"), 0) << "the first run was not killed";
  }
}

// 9. Launch lines as the PyTorch docs print them. Debian's torchrun (1.13) takes only the
// underscore spellings; ddplaunch must take those and the dashed ones of torchrun 2.x.
namespace {
void expect_hello_from_two_ranks(const BothRuns& b) {
  expect_same_or_better(b);
  EXPECT_EQ(b.torchrun.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.torchrun.output, "world=2 sum=3.0"), 2);
  EXPECT_EQ(count_of(b.ddplaunch.output, "HELLO rank=0 world=2 sum=3.0"), 1);
  EXPECT_EQ(count_of(b.ddplaunch.output, "HELLO rank=1 world=2 sum=3.0"), 1);
}
}  // namespace

TEST(TorchrunCompat, DocsStandaloneLine) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  BothRuns b = run_both(ws, {{"--standalone", "--nnodes=1", "--nproc_per_node=2"}, {}, {ws.script("hello.py")}, {}});
  ReportOnFailure report(b);
  expect_hello_from_two_ranks(b);
}

TEST(TorchrunCompat, DocsC10dRendezvousLine) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  const std::string endpoint = "localhost:" + std::to_string(port);
  BothRuns b = run_both(ws, {{"--nnodes=1", "--nproc_per_node=2", "--rdzv_backend=c10d", "--rdzv_endpoint=" + endpoint,
                              "--rdzv_id=compat42"},
                             {},
                             {ws.script("hello.py")},
                             {}});
  ReportOnFailure report(b);
  expect_hello_from_two_ranks(b);
}

TEST(TorchrunCompat, DocsC10dRendezvousLineWithDashesForDdplaunch) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  const std::string endpoint = "localhost:" + std::to_string(port);
  BothRuns b;
  run_ddplaunch(ws, {{"--nnodes=1", "--nproc-per-node=2", "--rdzv-backend=c10d", "--rdzv-endpoint=" + endpoint,
                      "--rdzv-id=compat42"},
                     {},
                     {ws.script("hello.py")},
                     {}},
                b);
  ReportOnFailure report(b);
  ASSERT_FALSE(b.ddplaunch.timed_out);
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(count_of(b.ddplaunch.output, "HELLO rank=0 world=2 sum=3.0"), 1);
  EXPECT_EQ(count_of(b.ddplaunch.output, "HELLO rank=1 world=2 sum=3.0"), 1);
}

TEST(TorchrunCompat, DocsStaticMasterAddrPortLine) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int port = dt::free_tcp_port();
  ASSERT_GT(port, 0);
  BothRuns b = run_both(ws, {{"--nnodes=1", "--node_rank=0", "--nproc_per_node=2", "--master_addr=127.0.0.1",
                              "--master_port=" + std::to_string(port)},
                             {},
                             {ws.script("hello.py")},
                             {}});
  ReportOnFailure report(b);
  expect_hello_from_two_ranks(b);
}

// 10. A real init hang: both ranks are inside init_process_group, rank 1 on a port nobody
// listens on (first run only). PyTorch's own timeout is 15 s, so torchrun fails then; ddplaunch's
// 3 s group init deadline catches it, restarts the group, and the second generation succeeds.
TEST(TorchrunCompat, RealInitHangIsCaughtByTheInitDeadline) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const int unused_port = dt::free_tcp_port();
  ASSERT_GT(unused_port, 0);
  BothRuns b = run_both(ws, {standalone_two_workers(), kShortDeadline,
                             {ws.script("init_hang.py"), std::to_string(unused_port)}, {}});
  ReportOnFailure report(b);
  expect_same_or_better(b);
  EXPECT_NE(b.torchrun.output.find("INIT TIMED OUT rank=1 run=0"), std::string::npos)
      << "the script did not hang in init under torchrun";
  EXPECT_EQ(b.ddplaunch.exit_code, 0);
  EXPECT_EQ(b.ddplaunch.output.find("INIT TIMED OUT"), std::string::npos)
      << "ddplaunch let PyTorch's 15 s timeout expire instead of its own 3 s deadline";
  EXPECT_NE(b.ddplaunch.output.find("init deadline"), std::string::npos);
  EXPECT_TRUE(has_line_with(b.ddplaunch.output, "restarting", "not restarting")) << "no restart announced";
  EXPECT_EQ(count_of(b.ddplaunch.output, "sum=3.0"), 2) << "no generation succeeded";
  EXPECT_EQ(count_of(b.ddplaunch.output, "run=0 sum="), 0) << "generation 0 did not hang";
}

// The worker environment: the torchrun contract variables of ranks 0 and 1 under both
// launchers. Values are compared except where they must differ (ports, run ids, file paths);
// those are compared by presence, error files also by per-rank distinctness.
TEST(TorchrunCompat, WorkerEnvironmentMatchesTorchrun) {
  SKIP_WITHOUT_TORCHRUN();
  Workspace ws;
  const std::string torchrun_out = ws.fresh_dir("env-torchrun");
  const std::string ddplaunch_out = ws.fresh_dir("env-ddplaunch");
  BothRuns b;
  run_torchrun(ws, {standalone_two_workers(), {}, {ws.script("env_dump.py"), torchrun_out}, {}}, b);
  run_ddplaunch(ws, {standalone_two_workers(), {}, {ws.script("env_dump.py"), ddplaunch_out}, {}}, b);
  ReportOnFailure report(b);
  expect_same_or_better(b);
  ASSERT_EQ(b.torchrun.exit_code, 0);
  ASSERT_EQ(b.ddplaunch.exit_code, 0);

  const std::vector<std::string> by_value{"RANK",
                                          "LOCAL_RANK",
                                          "WORLD_SIZE",
                                          "LOCAL_WORLD_SIZE",
                                          "GROUP_RANK",
                                          "GROUP_WORLD_SIZE",
                                          "ROLE_RANK",
                                          "ROLE_WORLD_SIZE",
                                          "ROLE_NAME",
                                          "TORCHELASTIC_RESTART_COUNT",
                                          "TORCHELASTIC_MAX_RESTARTS",
                                          "TORCHELASTIC_USE_AGENT_STORE",
                                          "OMP_NUM_THREADS",
                                          "NCCL_ASYNC_ERROR_HANDLING",
                                          "TORCH_NCCL_ASYNC_ERROR_HANDLING"};
  const std::vector<std::string> by_presence{"MASTER_ADDR", "MASTER_PORT", "PYTHON_EXEC", "TORCHELASTIC_RUN_ID",
                                             "TORCHELASTIC_ERROR_FILE"};
  std::map<std::string, std::string> torchrun_env[2], ddplaunch_env[2];
  for (int rank : {0, 1}) {
    const std::string file = "/env_rank" + std::to_string(rank) + ".txt";
    torchrun_env[rank] = read_env_file(torchrun_out + file);
    ddplaunch_env[rank] = read_env_file(ddplaunch_out + file);
    ASSERT_FALSE(torchrun_env[rank].empty()) << "no environment from torchrun's rank " << rank;
    ASSERT_FALSE(ddplaunch_env[rank].empty()) << "no environment from ddplaunch's rank " << rank;
    EXPECT_EQ(torchrun_env[rank]["RANK"], std::to_string(rank)) << "torchrun sanity";
  }
  for (int rank : {0, 1}) {
    auto& tenv = torchrun_env[rank];
    auto& denv = ddplaunch_env[rank];
    for (const auto& name : by_value) {
      if (!tenv.count(name)) continue;
      if (!denv.count(name)) {
        ADD_FAILURE() << name << " missing for rank " << rank << " (torchrun: " << tenv[name] << ")";
        continue;
      }
      EXPECT_EQ(denv[name], tenv[name]) << name << " of rank " << rank;
    }
    for (const auto& name : by_presence) {
      if (!tenv.count(name)) continue;
      EXPECT_TRUE(denv.count(name)) << name << " missing for rank " << rank << " (torchrun: " << tenv[name] << ")";
    }
  }
  // Shared by the ranks of one launcher: the store address; distinct per rank: the error file.
  for (auto* envs : {torchrun_env, ddplaunch_env}) {
    const bool is_torchrun = envs == torchrun_env;
    const std::string who = is_torchrun ? "torchrun" : "ddplaunch";
    EXPECT_EQ(envs[0]["MASTER_ADDR"], envs[1]["MASTER_ADDR"]) << who;
    EXPECT_EQ(envs[0]["MASTER_PORT"], envs[1]["MASTER_PORT"]) << who;
    EXPECT_EQ(envs[0]["TORCHELASTIC_RUN_ID"], envs[1]["TORCHELASTIC_RUN_ID"]) << who;
    if (envs[0].count("TORCHELASTIC_ERROR_FILE") && envs[1].count("TORCHELASTIC_ERROR_FILE")) {
      EXPECT_NE(envs[0]["TORCHELASTIC_ERROR_FILE"], envs[1]["TORCHELASTIC_ERROR_FILE"])
          << who << " gives both ranks the same error file";
    }
  }
}
