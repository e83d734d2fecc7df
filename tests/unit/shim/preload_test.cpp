// libddplaunch_nccl_preload.so: run the real nccl_probe under LD_PRELOAD and check the
// launcher would hear init_begin and init_failed carrying NCCL's own error text; every
// communicator creation (not only the first; splits too) is reported; a program that does not
// use NCCL gets neither libnccl nor libcuda mapped; and the wrapper's answer when no NCCL is
// loaded at all (dlopen'ed into this test binary).
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bound_status_socket.h"
#include "ddplaunch/contract.h"

extern char** environ;

namespace {

namespace c = ddplaunch::contract;

class PreloadTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(socket_.open("/tmp/shim_preload_XXXXXX")); }
  // Parsed status messages until `count` arrived or `timeout` passed.
  std::vector<c::StatusMessage> receive(std::size_t count, std::chrono::milliseconds timeout) {
    std::vector<c::StatusMessage> out;
    auto end = std::chrono::steady_clock::now() + timeout;
    while (out.size() < count) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      auto datagram = socket_.receive(static_cast<int>(left.count()));
      if (!datagram) break;
      if (datagram->empty()) continue;
      auto m = c::parse_status(*datagram);
      EXPECT_TRUE(m) << "unparsable datagram: " << *datagram;
      if (m) out.push_back(*m);
    }
    return out;
  }
  struct Run {
    int status = -1;  // wait status, -1: did not finish in time (killed)
    pid_t pid = 0;
    std::vector<c::StatusMessage> messages;
  };
  // Runs `program args` with the preload library and the status socket set up (RANK=0,
  // generation 1, plus `extra_env`), collects up to `expect` datagrams, then reaps it.
  Run run_preloaded(const std::string& program, std::vector<std::string> args,
                    std::vector<std::string> extra_env, std::size_t expect);
  ddplaunch::testing::BoundStatusSocket socket_;
};

std::string describe(const std::vector<c::StatusMessage>& messages) {
  std::string out;
  for (auto& m : messages) out += "[" + c::format_status(m) + "] ";
  return out;
}

// Waits for `pid` at most `timeout`; kills it after that. Returns the wait status or -1.
int wait_bounded(pid_t pid, std::chrono::seconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

PreloadTest::Run PreloadTest::run_preloaded(const std::string& program,
                                            std::vector<std::string> args,
                                            std::vector<std::string> extra_env,
                                            std::size_t expect) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    if (entry.starts_with("LD_PRELOAD=") || entry.starts_with("RANK=") ||
        entry.starts_with("DDPLAUNCH_") || entry.starts_with("FAKE_NCCL_"))
      continue;
    env_strings.emplace_back(entry);
  }
  env_strings.push_back(std::string("LD_PRELOAD=") + DDPLAUNCH_NCCL_PRELOAD);
  env_strings.push_back("DDPLAUNCH_STATUS_SOCKET=" + socket_.path());
  env_strings.push_back("RANK=0");
  env_strings.push_back("DDPLAUNCH_GENERATION=1");
  for (auto& e : extra_env) env_strings.push_back(e);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  args.insert(args.begin(), program);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  Run run;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  int rc = ::posix_spawn(&run.pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "could not start " << program;
  if (rc != 0) return run;
  run.messages = receive(expect, std::chrono::seconds(60));
  run.status = wait_bounded(run.pid, std::chrono::seconds(60));
  // Anything beyond `expect` is a defect too: collect briefly.
  for (auto& extra : receive(1, std::chrono::milliseconds(100))) run.messages.push_back(extra);
  return run;
}

TEST_F(PreloadTest, RealNcclInitFailureIsReportedWithNcclsOwnText) {
#ifndef DDPLAUNCH_NCCL_PROBE
  GTEST_SKIP() << "NCCL was not found at build time (no nccl.h/libnccl): nccl_probe not built";
#else
  Run run = run_preloaded(DDPLAUNCH_NCCL_PROBE, {}, {}, 2);
  int status = run.status;
  pid_t pid = run.pid;
  auto& messages = run.messages;
  ASSERT_NE(status, -1) << "nccl_probe did not finish within 60 s";
  ASSERT_EQ(messages.size(), 2u) << "expected init_begin and exactly one outcome datagram";
  EXPECT_EQ(messages[0].event, c::StatusEvent::InitBegin);
  EXPECT_EQ(messages[0].rank, 0);
  EXPECT_EQ(messages[0].generation, 1u);
  EXPECT_EQ(messages[0].pid, static_cast<long>(pid));
  EXPECT_EQ(messages[0].detail, "ncclCommInitRank");
  if (messages[1].event == c::StatusEvent::InitOk) {
    // A machine with a working GPU: the probe succeeds and so must the report.
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    GTEST_SKIP() << "NCCL init succeeded here (GPU present): init_ok reported; the failure "
                    "text could not be checked";
  }
  EXPECT_EQ(messages[1].event, c::StatusEvent::InitFailed);
  EXPECT_EQ(messages[1].pid, static_cast<long>(pid));
  // What NCCL 2.x itself prints for this failure on a machine without a usable GPU.
  EXPECT_NE(messages[1].detail.find("ncclCommInitRank failed: unhandled cuda error"),
            std::string::npos) << messages[1].detail;
  EXPECT_NE(messages[1].detail.find("; last error: Cuda failure"), std::string::npos)
      << messages[1].detail;
  // The program's own result is unchanged: the probe saw the failure and exited 1.
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "wait status " << status;
#endif
}

// A wrong NCCL_SOCKET_IFNAME fails before any communicator: in ncclGetUniqueId, while NCCL
// sets up its bootstrap network. That is an init failure too (what torch's rank 0 hits at
// its first collective), reported with NCCL's text; a successful ncclGetUniqueId reports
// nothing of its own (the test above sees exactly init_begin + outcome of the comm init).
TEST_F(PreloadTest, RealUniqueIdFailureOnABogusInterfaceIsAnInitFailure) {
#ifndef DDPLAUNCH_NCCL_PROBE
  GTEST_SKIP() << "NCCL was not found at build time (no nccl.h/libnccl): nccl_probe not built";
#else
  Run run = run_preloaded(DDPLAUNCH_NCCL_PROBE, {}, {"NCCL_SOCKET_IFNAME=ddpl_no_such0"}, 2);
  ASSERT_NE(run.status, -1) << "nccl_probe did not finish within 60 s";
  ASSERT_EQ(run.messages.size(), 2u) << describe(run.messages);
  EXPECT_EQ(run.messages[0].event, c::StatusEvent::InitBegin);
  EXPECT_EQ(run.messages[0].detail, "ncclGetUniqueId");
  EXPECT_EQ(run.messages[1].event, c::StatusEvent::InitFailed);
  EXPECT_NE(run.messages[1].detail.find("ncclGetUniqueId failed: "), std::string::npos)
      << run.messages[1].detail;
  EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 1) << "wait status "
                                                                      << run.status;
#endif
}

// With the fake NCCL: every outcome, and the program always sees NCCL's own result.
TEST_F(PreloadTest, SuccessfulInitReportsInitOk) {
  for (const char* which : {"rank", "config", "all"}) {
    Run run = run_preloaded(DDPLAUNCH_FAKE_NCCL_PROBE, {which}, {"FAKE_NCCL_INIT_RESULT=0"}, 2);
    ASSERT_EQ(run.messages.size(), 2u) << which << ": " << describe(run.messages);
    EXPECT_EQ(run.messages[0].event, c::StatusEvent::InitBegin) << which;
    EXPECT_EQ(run.messages[1].event, c::StatusEvent::InitOk) << which;
    EXPECT_EQ(run.messages[1].pid, static_cast<long>(run.pid));
    EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) << which;
  }
  Run all = run_preloaded(DDPLAUNCH_FAKE_NCCL_PROBE, {"all"}, {}, 2);
  ASSERT_EQ(all.messages.size(), 2u);
  EXPECT_EQ(all.messages[1].detail, "ncclCommInitAll");
}

// torch 2.x creates a communicator at the first collective and one per new sub-group: each
// creation is init again, and each must be reported.
TEST_F(PreloadTest, EveryCommunicatorCreationIsReportedNotOnlyTheFirst) {
  for (const char* which : {"rank", "config", "scalable", "split", "all"}) {
    Run run = run_preloaded(DDPLAUNCH_FAKE_NCCL_PROBE, {which, "3"}, {"FAKE_NCCL_INIT_RESULT=0"}, 6);
    ASSERT_EQ(run.messages.size(), 6u) << which << ": " << describe(run.messages);
    for (std::size_t i = 0; i < 6; i += 2) {
      EXPECT_EQ(run.messages[i].event, c::StatusEvent::InitBegin) << which << " #" << i / 2;
      EXPECT_EQ(run.messages[i + 1].event, c::StatusEvent::InitOk) << which << " #" << i / 2;
    }
    EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) << which;
  }
  Run split = run_preloaded(DDPLAUNCH_FAKE_NCCL_PROBE, {"split", "2"}, {"FAKE_NCCL_INIT_RESULT=5"}, 4);
  ASSERT_EQ(split.messages.size(), 4u) << describe(split.messages);
  EXPECT_EQ(split.messages[0].detail, "ncclCommSplit");
  EXPECT_EQ(split.messages[3].event, c::StatusEvent::InitFailed);
  EXPECT_EQ(split.messages[3].detail, "ncclCommSplit failed: fake nccl error 5; last error: fake last error");
  Run scalable = run_preloaded(DDPLAUNCH_FAKE_NCCL_PROBE, {"scalable"}, {}, 2);
  ASSERT_EQ(scalable.messages.size(), 2u) << "the inner ncclCommInitRank must not report again";
  EXPECT_EQ(scalable.messages[1].detail, "ncclCommInitRankScalable");
}

// The preload must cost a non-NCCL program nothing but its own mapping: nothing is loaded
// at start-up. `cat /proc/self/maps` run with LD_PRELOAD shows what is mapped while it runs.
TEST(PreloadLibrary, NonNcclProgramGetsNoNcclOrCudaMapped) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::vector<std::string> env_strings{std::string("LD_PRELOAD=") + DDPLAUNCH_NCCL_PRELOAD,
                                       "PATH=/usr/bin:/bin"};
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string cat = "/bin/cat", maps = "/proc/self/maps";
  char* argv[] = {cat.data(), maps.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, cat.c_str(), &actions, nullptr, argv, envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  std::string mapped;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) mapped.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  EXPECT_NE(wait_bounded(pid, std::chrono::seconds(30)), -1);
  EXPECT_NE(mapped.find("libddplaunch_nccl_preload.so"), std::string::npos)
      << "the preload was not loaded at all:\n" << mapped;
  EXPECT_EQ(mapped.find("libnccl"), std::string::npos) << mapped;
  EXPECT_EQ(mapped.find("libcuda"), std::string::npos) << mapped;
  EXPECT_EQ(mapped.find("libcudart"), std::string::npos) << mapped;
}

TEST_F(PreloadTest, FailedInitIsPassedThroughUnchangedWithNcclsText) {
  Run run = run_preloaded(DDPLAUNCH_FAKE_NCCL_PROBE, {"config"}, {"FAKE_NCCL_INIT_RESULT=5"}, 2);
  ASSERT_EQ(run.messages.size(), 2u);
  EXPECT_EQ(run.messages[1].event, c::StatusEvent::InitFailed);
  EXPECT_EQ(run.messages[1].detail,
            "ncclCommInitRankConfig failed: fake nccl error 5; last error: fake last error");
  EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 5) << run.status;
}

TEST_F(PreloadTest, NonBlockingInitIsSettledByGetAsyncError) {
  Run ok = run_preloaded(DDPLAUNCH_FAKE_NCCL_PROBE, {"config"},
                         {"FAKE_NCCL_INIT_RESULT=7", "FAKE_NCCL_ASYNC_RESULT=0"}, 2);
  ASSERT_EQ(ok.messages.size(), 2u);
  EXPECT_EQ(ok.messages[0].event, c::StatusEvent::InitBegin);
  EXPECT_EQ(ok.messages[1].event, c::StatusEvent::InitOk);
  EXPECT_TRUE(WIFEXITED(ok.status) && WEXITSTATUS(ok.status) == 7) << "ncclInProgress returned";

  Run failed = run_preloaded(DDPLAUNCH_FAKE_NCCL_PROBE, {"rank"},
                             {"FAKE_NCCL_INIT_RESULT=7", "FAKE_NCCL_ASYNC_RESULT=3"}, 2);
  ASSERT_EQ(failed.messages.size(), 2u);
  EXPECT_EQ(failed.messages[1].event, c::StatusEvent::InitFailed);
  EXPECT_EQ(failed.messages[1].detail,
            "ncclCommInitRank failed: fake nccl error 3; last error: fake last error");
}

TEST_F(PreloadTest, WithoutNcclInTheProcessInitReturnsSystemErrorAndSaysSo) {
  // This binary does not link NCCL, so the wrapper finds no real function after itself.
  void* lib = ::dlopen(DDPLAUNCH_NCCL_PRELOAD, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  if (::dlsym(RTLD_DEFAULT, "ncclGetErrorString")) {
    ::dlclose(lib);
    GTEST_SKIP() << "NCCL is already loaded in this test process";
  }
  using InitAll = int (*)(void**, int, const int*);
  auto init_all = reinterpret_cast<InitAll>(::dlsym(lib, "ncclCommInitAll"));
  ASSERT_NE(init_all, nullptr);
  ::setenv("DDPLAUNCH_STATUS_SOCKET", socket_.path().c_str(), 1);
  ::setenv("RANK", "2", 1);
  void* comm = nullptr;
  int res = init_all(&comm, 1, nullptr);
  ::unsetenv("DDPLAUNCH_STATUS_SOCKET");
  ::unsetenv("RANK");
  EXPECT_EQ(res, 2) << "ncclSystemError expected";
  auto messages = receive(2, std::chrono::seconds(5));
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].event, c::StatusEvent::InitBegin);
  EXPECT_EQ(messages[1].event, c::StatusEvent::InitFailed);
  EXPECT_EQ(messages[1].rank, 2);
  EXPECT_NE(messages[1].detail.find("NCCL was not found"), std::string::npos)
      << messages[1].detail;
  ::dlclose(lib);
}

TEST(PreloadLibrary, ExportsOnlyTheWrappedNcclFunctions) {
  void* lib = ::dlopen(DDPLAUNCH_NCCL_PRELOAD, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  for (const char* name : {"ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitAll",
                           "ncclCommInitRankScalable", "ncclCommSplit", "ncclCommGetAsyncError",
                           "ncclGetUniqueId"})
    EXPECT_NE(::dlsym(lib, name), nullptr) << name;
  // The shim's own symbols stay inside the library (no clash with a trainer's copy).
  EXPECT_EQ(::dlsym(lib, "_ZN9ddplaunch4shim6reportENS_8contract11StatusEventESt17basic_string_viewIcSt11char_traitsIcEE"),
            nullptr);
  ::dlclose(lib);
}

}  // namespace
