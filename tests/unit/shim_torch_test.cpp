// Tests for ddplaunch_shim_torch: a real 2-rank gloo group (two threads, 127.0.0.1), the
// bounded failure when nobody serves the store, contract and backend errors, the status
// datagrams init_process_group sends, and the environment overload.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

// Debian's header hides the class unless this is set; needed only to read the group's timeout.
#define USE_C10D_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "ddplaunch/shim_torch.h"

namespace {

namespace shim = ddplaunch::shim;
namespace contract = ddplaunch::contract;

// A port that was free a moment ago on 127.0.0.1 (the kernel picked it).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

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
  auto result = shim::init_process_group(make_contract(1, 2, port, 2), "gloo");
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
  EXPECT_EQ(begin->generation, 3);
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
  EXPECT_EQ(gloo->getOptions()->timeout, std::chrono::seconds(15));

  ::unsetenv(contract::kMasterAddr);
  auto missing = shim::init_process_group("gloo");
  EXPECT_FALSE(missing.group);
  EXPECT_NE(missing.error.find("MASTER_ADDR"), std::string::npos) << missing.error;
  for (const auto& [name, value] : env) ::unsetenv(name);
}

}  // namespace
