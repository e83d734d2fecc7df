// Tests for ddplaunch_shim_torch: a real 2-rank gloo group (two threads, 127.0.0.1), the
// bounded failure when nobody serves the store, contract and backend errors, the status
// datagrams init_process_group sends, the environment overload, and PyTorch's default
// timeouts whatever DDPLAUNCH_TIMEOUT_S says: two real processes (this binary re-run as
// ranks) survive a 12 s pause between all_reduces under DDPLAUNCH_TIMEOUT_S=5.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

// Debian's header hides the class unless this is set; needed only to read the group's timeout.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "ddplaunch/shim.h"
#include "ddplaunch/shim_torch.h"
#include "process_runner.h"  // tests/integration/support: free_tcp_port

extern char** environ;

namespace {

namespace shim = ddplaunch::shim;
namespace contract = ddplaunch::contract;

// A port on 127.0.0.1 reserved for this process, shared with no test running in parallel; 0 if none.
int free_port() { return std::max(ddplaunch::testing::free_tcp_port(), 0); }

shim::WorkerContract make_contract(int rank, int world, int port, double timeout_s) {
  shim::WorkerContract c;
  c.master_addr = "127.0.0.1";
  c.master_port = port;
  c.rank = rank;
  c.local_rank = rank;
  c.world_size = world;
  c.local_world_size = world;
  c.timeout_s = timeout_s;
  return c;
}

// Binds a datagram socket in a fresh temp dir and points the shim's reporter at it.
class StatusSocket {
 public:
  StatusSocket() {
    dir_ = std::filesystem::temp_directory_path() /
           ("ddpl-shim-torch-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "status.sock").string();
    std::filesystem::remove(path_);
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path_.c_str());
    bound_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    timeval tv{2, 0};  // receive never waits longer than this
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setenv(contract::kStatusSocket, path_.c_str(), 1);
    ::setenv(contract::kRank, "0", 1);
    ::setenv(contract::kGeneration, "3", 1);
  }
  ~StatusSocket() {
    ::unsetenv(contract::kStatusSocket);
    ::unsetenv(contract::kRank);
    ::unsetenv(contract::kGeneration);
    if (fd_ >= 0) ::close(fd_);
    std::filesystem::remove_all(dir_);
  }
  bool bound() const { return bound_; }
  // The next parsed status message; nullopt on timeout or garbage.
  std::optional<contract::StatusMessage> next() {
    char buf[contract::kMaxStatusBytes + 1];
    ssize_t n = ::recv(fd_, buf, sizeof(buf) - 1, 0);
    if (n <= 0) return std::nullopt;
    return contract::parse_status(std::string_view(buf, static_cast<std::size_t>(n)));
  }

 private:
  std::filesystem::path dir_;
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

TEST(ShimTorch, TwoRanksOnTwoThreadsAllreduceSums) {
  const int port = free_port();
  ASSERT_GT(port, 0);
  shim::ProcessGroupResult results[2];
  std::vector<float> reduced[2];
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      results[r] = shim::init_process_group(make_contract(r, 2, port, 30), "gloo");
      if (!results[r].group) return;
      // rank 0 contributes {1, 10}, rank 1 {2, 20}: the sum is {3, 30} on both.
      std::vector<at::Tensor> t{at::tensor({1.0f * (r + 1), 10.0f * (r + 1)})};
      results[r].group->allreduce(t)->wait();
      reduced[r] = {t[0][0].item<float>(), t[0][1].item<float>()};
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(results[r].group) << "rank " << r << ": " << results[r].error;
    EXPECT_TRUE(results[r].error.empty());
    EXPECT_EQ(results[r].group->getRank(), r);
    EXPECT_EQ(results[r].group->getSize(), 2);
    EXPECT_EQ(reduced[r], (std::vector<float>{3.0f, 30.0f})) << "rank " << r;
  }
}

TEST(ShimTorch, NobodyServingTheStoreFailsWithinTheTimeout) {
  const int port = free_port();
  ASSERT_GT(port, 0);
  auto start = std::chrono::steady_clock::now();
  auto result = shim::init_process_group(make_contract(1, 2, port, 600), "gloo",
                                         std::chrono::seconds(2));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(result.group);
  EXPECT_NE(result.error.find("rank 1/2"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << result.error;
  EXPECT_NE(result.error.find("rank 0 is not running"), std::string::npos) << result.error;
  EXPECT_LT(elapsed, std::chrono::seconds(20)) << "timeout 2 s was not honoured";
}

TEST(ShimTorch, InvalidContractIsAnErrorNotAHang) {
  auto result = shim::init_process_group(make_contract(5, 2, 1234, 1), "gloo");
  EXPECT_FALSE(result.group);
  EXPECT_NE(result.error.find("RANK=5"), std::string::npos) << result.error;
  auto no_port = shim::init_process_group(make_contract(0, 1, 0, 1), "gloo");
  EXPECT_NE(no_port.error.find("MASTER_PORT=0"), std::string::npos) << no_port.error;
}

TEST(ShimTorch, UnavailableBackendsAreNamed) {
  auto unknown = shim::init_process_group(make_contract(0, 1, free_port(), 1), "mpi");
  EXPECT_FALSE(unknown.group);
  EXPECT_NE(unknown.error.find("unknown backend \"mpi\""), std::string::npos) << unknown.error;
  auto backends = shim::available_backends();
  ASSERT_FALSE(backends.empty());
  EXPECT_EQ(backends[0], "gloo");
  if (std::find(backends.begin(), backends.end(), "nccl") == backends.end()) {
    auto nccl = shim::init_process_group(make_contract(0, 1, free_port(), 1), "nccl");
    EXPECT_FALSE(nccl.group);
    EXPECT_NE(nccl.error.find("without NCCL"), std::string::npos) << nccl.error;
  }
}

TEST(ShimTorch, ReportsBeginThenOkOrFailedOnTheStatusSocket) {
  StatusSocket status;
  ASSERT_TRUE(status.bound());

  auto ok = shim::init_process_group(make_contract(0, 1, free_port(), 10), "gloo");
  ASSERT_TRUE(ok.group) << ok.error;
  auto begin = status.next();
  ASSERT_TRUE(begin);
  EXPECT_EQ(begin->event, contract::StatusEvent::InitBegin);
  EXPECT_EQ(begin->rank, 0);
  EXPECT_EQ(begin->generation, 3u);
  EXPECT_EQ(begin->pid, ::getpid());
  auto done = status.next();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->event, contract::StatusEvent::InitOk);

  auto bad = shim::init_process_group(make_contract(7, 2, 1234, 1), "gloo");
  ASSERT_FALSE(bad.group);
  auto begin2 = status.next();
  ASSERT_TRUE(begin2);
  EXPECT_EQ(begin2->event, contract::StatusEvent::InitBegin);
  auto failed = status.next();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->event, contract::StatusEvent::InitFailed);
  EXPECT_NE(failed->detail.find("RANK=7"), std::string::npos) << failed->detail;
}

// A program without steps of its own (a loop of all_reduce calls) is hang-watched: each
// completed collective of the shim's group counts as progress ("step" reports) — until the
// program calls step() itself; then only its steps count.
TEST(ShimTorch, CompletedCollectivesCountAsProgressUntilTheProgramStepsItself) {
  StatusSocket status;
  ASSERT_TRUE(status.bound());
  auto made = shim::init_process_group(make_contract(0, 1, free_port(), 10), "gloo");
  ASSERT_TRUE(made.group) << made.error;
  ASSERT_EQ(status.next()->event, contract::StatusEvent::InitBegin);
  ASSERT_EQ(status.next()->event, contract::StatusEvent::InitOk);
  auto allreduce = [&] {
    std::vector<at::Tensor> t{at::ones({4})};
    made.group->allreduce(t)->wait();
  };
  // The counter is the process's: counts are compared, not taken as absolute (another test of
  // this binary may have counted before). A report goes out at most once a second.
  auto steps_reported = [&]() -> long {
    auto m = status.next();
    if (!m || m->event != contract::StatusEvent::Step) return -1;
    auto detail = contract::parse_step_detail(m->detail);
    return detail ? detail->steps : -1;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  for (int i = 0; i < 3; ++i) allreduce();
  const long after_first = steps_reported();  // reported at the first of the three
  ASSERT_GT(after_first, 0);

  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  shim::step();  // the program steps itself from now on
  const long stepped = steps_reported();
  EXPECT_EQ(stepped, after_first + 3);  // the two other collectives, then this step
  for (int i = 0; i < 5; ++i) allreduce();  // no longer progress of their own
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  shim::step();
  EXPECT_EQ(steps_reported(), stepped + 1);
}

// The time a collective is in flight is waiting: rank 1 (a thread of this process) reaches the
// all_reduce 400 ms after rank 0, so rank 0's collective is in flight that long, and the next
// step report carries it, within the wall time it covers.
TEST(ShimTorch, TheTimeACollectiveWaitsForALatePeerGoesWithTheStepReport) {
  StatusSocket status;
  ASSERT_TRUE(status.bound());
  const int port = free_port();
  ASSERT_GT(port, 0);
  shim::ProcessGroupResult results[2];
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      results[r] = shim::init_process_group(make_contract(r, 2, port, 30), "gloo");
      if (!results[r].group) return;
      std::vector<at::Tensor> t{at::ones({4})};
      results[r].group->allreduce(t)->wait();  // together, once
      std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the next report may go
      if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(400));
      results[r].group->allreduce(t)->wait();
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(results[r].group) << results[r].error;
  // A step a second later is reported whether or not collectives still count as progress here
  // (another test of this binary may have stepped): it carries whatever wait was not yet sent.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  shim::step();
  // The reports of this process (both ranks count into one counter).
  std::optional<contract::StepProgress> last;
  for (int i = 0; i < 20; ++i) {
    auto m = status.next();
    if (!m) break;
    if (m->event != contract::StatusEvent::Step) continue;
    if (auto detail = contract::parse_step_detail(m->detail); detail && detail->span_ms > 0 &&
        (!last || detail->wait_ms > last->wait_ms))
      last = detail;  // the report that carried the late peer's wait: the one with the most
  }
  ASSERT_TRUE(last) << "no step report with a measured span";
  EXPECT_GE(last->wait_ms, 350);
  EXPECT_LE(last->wait_ms, last->span_ms);
}

TEST(ShimTorch, EnvironmentOverloadReadsTheContract) {
  const std::string port = std::to_string(free_port());
  const std::vector<std::pair<const char*, std::string>> env = {
      {contract::kMasterAddr, "127.0.0.1"}, {contract::kMasterPort, port},
      {contract::kRank, "0"},               {contract::kLocalRank, "0"},
      {contract::kWorldSize, "1"},          {contract::kLocalWorldSize, "1"},
      {contract::kTimeoutSeconds, "15"}};
  for (const auto& [name, value] : env) ::setenv(name, value.c_str(), 1);
  auto result = shim::init_process_group("gloo");
  ASSERT_TRUE(result.group) << result.error;
  EXPECT_EQ(result.group->getSize(), 1);
  auto* gloo = dynamic_cast<c10d::ProcessGroupGloo*>(result.group.get());
  ASSERT_NE(gloo, nullptr);
  // DDPLAUNCH_TIMEOUT_S=15 is the launcher's init deadline, not the group's timeout.
  EXPECT_EQ(gloo->getOptions()->timeout, std::chrono::seconds(1800));
  result = {};

  // The program's own timeout wins, as with torch.distributed.init_process_group(timeout=).
  ::setenv(contract::kMasterPort, std::to_string(free_port()).c_str(), 1);
  auto own = shim::init_process_group("gloo", std::chrono::seconds(15));
  ASSERT_TRUE(own.group) << own.error;
  auto* own_gloo = dynamic_cast<c10d::ProcessGroupGloo*>(own.group.get());
  ASSERT_NE(own_gloo, nullptr);
  EXPECT_EQ(own_gloo->getOptions()->timeout, std::chrono::seconds(15));

  ::unsetenv(contract::kMasterAddr);
  auto missing = shim::init_process_group("gloo");
  EXPECT_FALSE(missing.group);
  EXPECT_NE(missing.error.find("MASTER_ADDR"), std::string::npos) << missing.error;
  for (const auto& [name, value] : env) ::unsetenv(name);
}

TEST(ShimTorch, DefaultTimeoutsArePyTorchsOwn) {
  EXPECT_EQ(shim::default_timeout("gloo"), std::chrono::minutes(30));
  EXPECT_EQ(shim::default_timeout("nccl"), std::chrono::minutes(10));
}

// One rank of PauseBetweenAllreducesLongerThanTheLauncherTimeout, when this binary is re-run
// with DDPL_PAUSE_CHILD set: all_reduce, rank 1 sleeps 12 s, all_reduce; the sum must be 4.
TEST(ShimTorchChild, AllreducePauseAllreduce) {
  if (!std::getenv("DDPL_PAUSE_CHILD")) GTEST_SKIP() << "runs only as a child of the pause test";
  auto pg = shim::init_process_group("gloo");
  ASSERT_TRUE(pg.group) << pg.error;
  std::vector<at::Tensor> t{at::ones({1})};
  pg.group->allreduce(t)->wait();
  if (pg.group->getRank() == 1) std::this_thread::sleep_for(std::chrono::seconds(12));
  pg.group->allreduce(t)->wait();  // throws (test fails) if the group timeout were 5 s
  EXPECT_EQ(t[0].item<float>(), 4.0f);
}

TEST(ShimTorch, PauseBetweenAllreducesLongerThanTheLauncherTimeoutSucceeds) {
  const std::string port = std::to_string(free_port());
  std::vector<pid_t> pids;
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    for (std::string v : std::vector<std::string>{"DDPL_PAUSE_CHILD=1", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + port,
                          "RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(rank),
                          "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2", "DDPLAUNCH_TIMEOUT_S=5"})
      env.push_back(v);
    std::vector<char*> envp;
    for (auto& v : env) envp.push_back(v.data());
    envp.push_back(nullptr);
    std::string self = "/proc/self/exe", filter = "--gtest_filter=ShimTorchChild.*";
    char* argv[] = {self.data(), filter.data(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()), 0);
    pids.push_back(pid);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  for (std::size_t rank = 0; rank < pids.size(); ++rank) {
    int status = 0;
    pid_t r = 0;
    while ((r = ::waitpid(pids[rank], &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (r == 0) {
      for (pid_t p : pids) ::kill(p, SIGKILL);
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);
      FAIL() << "ranks did not finish within 90 s";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "rank " << rank << " failed (wait status " << status << ")";
  }
}

}  // namespace
