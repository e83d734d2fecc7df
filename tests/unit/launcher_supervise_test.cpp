// Pieces of worker supervision that need no event loop: line reassembly, prefixes, exit
// status classification, init-error signatures, failure messages and the root cause text.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "agent/launcher_messages.h"
#include "policy/root_cause.h"
#include "output/line_splitter.h"
#include "output/worker_output.h"
#include "ddplaunch/base/exit_status.h"
#include "supervise/init_signatures.h"

using namespace ddplaunch;

namespace {
std::vector<std::string> split_all(LineSplitter& s, const std::vector<std::string>& chunks, bool finish = true) {
  std::vector<std::string> lines;
  auto add = [&](std::string_view l) { lines.emplace_back(l); };
  for (const auto& c : chunks) s.feed(c, add);
  if (finish) s.finish(add);
  return lines;
}

int wait_status_of(void (*child)()) {
  pid_t pid = fork();
  if (pid == 0) {
    child();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}
}  // namespace

TEST(LineSplitter, ReassemblesLinesAcrossChunks) {
  LineSplitter s;
  EXPECT_EQ(split_all(s, {"hel", "lo\nwor", "ld\n\nlast"}),
            (std::vector<std::string>{"hello", "world", "", "last"}));
}

TEST(LineSplitter, CutsOverlongLinesAtTheBound) {
  LineSplitter s(4);
  EXPECT_EQ(split_all(s, {"abcdefghij\nxy\n"}), (std::vector<std::string>{"abcd", "efgh", "ij", "xy"}));
}

TEST(LineSplitter, KeepsPartialLineUntilFinish) {
  LineSplitter s;
  EXPECT_TRUE(split_all(s, {"no newline yet"}, false).empty());
}

TEST(WorkerOutput, PrefixNamesNodeOnlyOnMultiNodeJobs) {
  EXPECT_EQ(worker_prefix(0, 1, 3), "[rank 3]");
  EXPECT_EQ(worker_prefix(2, 4, 9), "[node 2 rank 9]");
}

TEST(ExitStatus, ClassifiesRealChildren) {
  ExitStatus exited = exit_status_from_wait(wait_status_of([] { _exit(7); }));
  EXPECT_FALSE(exited.signaled);
  EXPECT_EQ(exited.shell_code(), 7);
  EXPECT_EQ(exited.describe(), "exit code 7");
  ExitStatus killed = exit_status_from_wait(wait_status_of([] { raise(SIGKILL); }));
  EXPECT_TRUE(killed.signaled);
  EXPECT_EQ(killed.shell_code(), 137);
  EXPECT_EQ(killed.describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_TRUE(exit_status_from_wait(wait_status_of([] { _exit(0); })).success());
}

TEST(InitSignatures, RecognisesNcclAndC10dInitErrors) {
  const char* init_errors[] = {
      "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error",
      "torch.distributed.DistNetworkError: Connection reset by peer",
      "RuntimeError: The server socket has failed to listen on any local network address. EADDRINUSE",
      "ncclCommInitRank failed: unhandled cuda error",
      "[E socket.cpp:860] [c10d] The client socket has timed out after 1800s while trying to connect to (10.0.0.1, 29500).",
      "RuntimeError: Socket Timeout",
      "NCCL WARN Bootstrap : no socket interface found",
      "RuntimeError: Gloo connectFullMesh failed with ...",
      "RuntimeError: Timed out initializing process group in store based barrier on rank: 1",
  };
  for (const char* line : init_errors) EXPECT_TRUE(match_init_signature(std::string_view(line))) << line;
}

TEST(InitSignatures, IgnoresOrdinaryTrainingOutput) {
  for (const char* line : {"step 10 loss 0.25", "CUDA out of memory. Tried to allocate 2.00 GiB",
                           "ValueError: Expected input batch_size (32) to match target batch_size (16)"})
    EXPECT_FALSE(match_init_signature(std::string_view(line))) << line;
  EXPECT_TRUE(match_init_signature(std::deque<std::string>{"ok", "NCCL error: unhandled system error"}));
}

TEST(LauncherMessages, FailureRoundTripsThroughRendezvousFields) {
  WorkerFailure f;
  f.node_rank = 1;
  f.global_rank = 5;
  f.local_rank = 1;
  f.pid = 4321;
  f.phase = FailurePhase::Init;
  f.kind = FailureKind::InitFailed;
  f.status = ExitStatus{false, 3, 0, false};
  f.detail = "ncclCommInitRank failed: unhandled cuda error";
  f.tail = {"line a", "line b"};
  auto decoded = messages::decode_failure(messages::encode(2, FailureReport{f, "gpu07"}));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->host, "gpu07");
  EXPECT_EQ(decoded->failure.global_rank, 5);
  EXPECT_EQ(decoded->failure.local_rank, 1);
  EXPECT_EQ(decoded->failure.node_rank, 1);
  EXPECT_EQ(decoded->failure.pid, 4321);
  EXPECT_EQ(decoded->failure.phase, FailurePhase::Init);
  EXPECT_EQ(decoded->failure.detail, f.detail);
  ASSERT_TRUE(decoded->failure.status);
  EXPECT_EQ(decoded->failure.status->code, 3);
  EXPECT_EQ(decoded->failure.tail, f.tail);
  EXPECT_EQ(decoded->failure.kind, FailureKind::InitFailed);
  EXPECT_FALSE(messages::decode_failure(messages::encode(0, messages::Stop{"x", 1})));
}

// The wire and the saved state share one codec: a core dump reported by a node reaches the
// master's root cause, and a report that is not a whole one is refused, not guessed at.
TEST(LauncherMessages, ACoreDumpSurvivesTheWireAndAPartialReportIsRefused) {
  WorkerFailure f;
  f.global_rank = 2;
  f.phase = FailurePhase::Runtime;
  f.status = ExitStatus{true, 0, 11, true};
  f.init_signature = "c10d: address already in use";
  auto decoded = messages::decode_failure(messages::encode(4, FailureReport{f, "gpu02"}));
  ASSERT_TRUE(decoded);
  ASSERT_TRUE(decoded->failure.status);
  EXPECT_TRUE(decoded->failure.status->signaled);
  EXPECT_EQ(decoded->failure.status->signal, 11);
  EXPECT_TRUE(decoded->failure.status->core_dumped);
  EXPECT_EQ(decoded->failure.init_signature, f.init_signature);
  rendezvous::Message partial = messages::encode(4, FailureReport{f, "gpu02"});
  partial.fields["report"] = R"({"host": "gpu02", "global_rank": 2})";
  EXPECT_FALSE(messages::decode_failure(partial));
  partial.fields["report"] = "not json {";
  EXPECT_FALSE(messages::decode_failure(partial));
}

TEST(RootCause, NamesRankNodeHostPhaseStatusErrorAndOutput) {
  FailureReport r;
  r.host = "gpu07";
  r.failure.node_rank = 1;
  r.failure.global_rank = 5;
  r.failure.local_rank = 1;
  r.failure.pid = 4321;
  r.failure.kind = FailureKind::Exited;
  r.failure.status = ExitStatus{true, 0, 11, true};
  r.failure.detail = "NCCL error: unhandled system error";
  r.failure.tail = {"loading", "boom"};
  std::string text = describe_root_cause(r, 2, 3, "3 of 3");
  for (const char* needle : {"rank 5 (local rank 1) on node 1 (gpu07), pid 4321", "killed by signal 11 (SIGSEGV)",
                             "during init in generation 3", "error: NCCL error: unhandled system error",
                             "restarts used: 3 of 3; other failures: 2", "last 2 output lines of rank 5", "    | boom"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  EXPECT_EQ(failure_exit_code(r.failure), 139);
}
