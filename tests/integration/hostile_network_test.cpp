// Hostile peers against a real master on 127.0.0.1: floods of large messages before joining,
// descriptor exhaustion, a node restarted while its old connection lingers, forged log text and
// a drop-warning flood. Each time the real job (real ddplaunch nodes, fake_worker) must still
// start and end right, and the master stay bounded.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "multi_node_job.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::testing::BackgroundProcess;
using ddplaunch::testing::MultiNodeJob;
using ddplaunch::testing::RunResult;
using ddplaunch::testing::start_node;
using ddplaunch::testing::wait_listening;

constexpr auto kJobBound = 60s;

MultiNodeJob new_job(int nodes, const std::string& job_id) {
  return ddplaunch::testing::new_loopback_job(DDPLAUNCH_BIN, nodes, job_id);
}

std::vector<std::string> node(const MultiNodeJob& job, int rank, const std::vector<std::string>& flags = {}) {
  return ddplaunch::testing::node_argv(job, rank, 1, flags, {FAKE_WORKER_BIN, "--exit", "0"});
}

// Node 0 started and listening; nullptr (with a test failure) when it never listened.
std::unique_ptr<BackgroundProcess> start_master(const MultiNodeJob& job) {
  auto node0 = start_node(node(job, 0));
  if (wait_listening(*node0)) return node0;
  ADD_FAILURE() << "node 0 never listened:\n" << node0->output_so_far();
  return nullptr;
}

void expect_succeeded(const std::vector<const RunResult*>& nodes) {
  for (std::size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(nodes[i]->exit_code, 0) << "node " << i << ":\n" << nodes[i]->output;
}

long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

int fd_count(pid_t pid) {
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (!dir) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) n += e->d_name[0] != '.' ? 1 : 0;
  closedir(dir);
  return n;
}

// The master's peak RSS and descriptor count, sampled by a thread of its own.
class PeakSampler {
 public:
  explicit PeakSampler(pid_t pid) : thread_([this, pid] {
    for (int i = 0; i < 20000 && !stop_; ++i) {  // bounded: 20000 × 5 ms
      peak_rss_ = std::max(peak_rss_.load(), rss_kib(pid));
      peak_fds_ = std::max(peak_fds_.load(), fd_count(pid));
      std::this_thread::sleep_for(5ms);
    }
  }) {}
  ~PeakSampler() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  long peak_rss_kib() const { return peak_rss_; }
  int peak_fds() const { return peak_fds_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<long> peak_rss_{0};
  std::atomic<int> peak_fds_{0};
  std::thread thread_;
};

// A non-blocking TCP connection to 127.0.0.1:port (connect bounded by 1 s); -1 on failure.
int connect_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  pollfd p{fd, POLLOUT, 0};
  int err = 0;
  socklen_t len = sizeof err;
  if (::poll(&p, 1, 1000) != 1 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// True when the server has closed or reset fd (EOF or error on a non-blocking read).
bool closed_by_peer(int fd) {
  char buf[4096];
  for (int i = 0; i < 64; ++i) {
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
  }
  return false;
}

std::string length_prefix(std::uint32_t n) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (24 - 8 * i)) & 0xff);
  return out;
}

// One wave of strangers, each sending a message of almost 1 MiB (under the limit a joined node
// has) that it never finishes, all open at once; bounded by `bound`, then all closed.
void large_message_wave(int port, int connections, std::chrono::milliseconds bound) {
  const std::uint32_t announced = (1u << 20) - 64;
  const std::string payload = length_prefix(announced) + std::string(announced - 1, 'x');
  std::vector<int> fds;
  std::vector<std::size_t> sent;
  for (int i = 0; i < connections; ++i) {
    int fd = connect_loopback(port);
    if (fd >= 0) {
      fds.push_back(fd);
      sent.push_back(0);
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (bool busy = true; busy && std::chrono::steady_clock::now() < deadline;) {
    busy = false;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (sent[i] >= payload.size()) continue;
      ssize_t n = ::send(fds[i], payload.data() + sent[i], payload.size() - sent[i], MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) sent[i] += static_cast<std::size_t>(n);
      else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) sent[i] = payload.size();  // closed on us
      busy = busy || sent[i] < payload.size();
    }
    if (busy) std::this_thread::sleep_for(2ms);
  }
  for (int fd : fds) ::close(fd);
}

}  // namespace

// A flood: 2000 strangers each sending 1 MiB before joining (in waves of 400 open at once;
// without a limit the master grows to 1.5 GB). With the small limit before joining it stays
// under 64 MiB, and a node started during the flood still joins; the job ends right.
TEST(HostileNetwork, LargeMessageFloodBeforeJoinKeepsMasterSmallAndJobRuns) {
  struct rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  files.rlim_cur = files.rlim_max;  // this test process holds 400 strangers at once
  setrlimit(RLIMIT_NOFILE, &files);
  getrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < 600) GTEST_SKIP() << "this test needs 600 descriptors (RLIMIT_NOFILE is " << files.rlim_cur << ")";
  MultiNodeJob job = new_job(2, "flood-job");
  auto node0 = start_master(job);
  ASSERT_TRUE(node0);
  const long rss_before = rss_kib(node0->pid());
  PeakSampler sampler(node0->pid());
  std::unique_ptr<BackgroundProcess> node1;
  for (int wave = 0; wave < 5; ++wave) {
    large_message_wave(job.port, 400, 4000ms);
    if (wave == 1) node1 = start_node(node(job, 1));  // joins while strangers keep coming
  }
  RunResult r1 = node1->wait(kJobBound);
  RunResult r0 = node0->wait(kJobBound);
  sampler.stop();
  expect_succeeded({&r0, &r1});
  EXPECT_LT(sampler.peak_rss_kib(), 64 * 1024) << "master RSS before the flood: " << rss_before << " KiB";
  EXPECT_NE(r0.output.find("rendezvous: dropped"), std::string::npos) << r0.output;
}

// A master out of file descriptors (its limit lowered to 12 above what it uses) under a
// flood of half-open connections: it keeps accepting once descriptors free up, and a node that
// meets no greeting meanwhile retries within its join timeout instead of giving up.
TEST(HostileNetwork, MasterOutOfDescriptorsRecoversAndNodeStillJoins) {
  MultiNodeJob job = new_job(2, "nofile-job");
  auto node0 = start_master(job);
  ASSERT_TRUE(node0);
  std::this_thread::sleep_for(300ms);  // its own node joined: its descriptors are all open
  const int baseline = fd_count(node0->pid());
  ASSERT_GT(baseline, 0);
  const rlim_t limit = static_cast<rlim_t>(baseline + 12);  // under the cap of 16 per address: it runs out
  struct rlimit low{limit, limit};
  ASSERT_EQ(prlimit(node0->pid(), RLIMIT_NOFILE, &low, nullptr), 0) << "prlimit: " << std::strerror(errno);
  PeakSampler sampler(node0->pid());
  std::atomic<bool> flooding{true};
  std::thread flood([&] {
    std::vector<int> fds;
    for (int round = 0; round < 2000 && flooding; ++round) {  // bounded; ends when told
      while (fds.size() < 40 && flooding) {
        int fd = connect_loopback(job.port);
        if (fd < 0) break;
        fds.push_back(fd);
      }
      for (auto& fd : fds)
        if (closed_by_peer(fd)) {
          ::close(fd);
          fd = -1;
        }
      fds.erase(std::remove(fds.begin(), fds.end(), -1), fds.end());
      std::this_thread::sleep_for(20ms);
    }
    for (int fd : fds) ::close(fd);
  });
  std::this_thread::sleep_for(1000ms);
  auto node1 = start_node(node(job, 1, {"--connect-timeout", "1"}));
  std::this_thread::sleep_for(4000ms);  // node 1 meets no greeting, several times
  flooding = false;
  flood.join();
  RunResult r1 = node1->wait(kJobBound);
  RunResult r0 = node0->wait(kJobBound);
  sampler.stop();
  EXPECT_GE(sampler.peak_fds(), static_cast<int>(limit) - 1) << "the flood did not exhaust the master's descriptors";
  expect_succeeded({&r0, &r1});
}

// A node frozen after joining (its connection silent, as when a machine hangs) and started
// again on the same host with the same rank gets its place back instead of "duplicate rank".
TEST(HostileNetwork, RestartedNodeReplacesItsSilentOldConnection) {
  MultiNodeJob job = new_job(3, "restart-job");
  auto node0 = start_master(job);
  ASSERT_TRUE(node0);
  auto old_node1 = start_node(node(job, 1));
  ASSERT_TRUE(node0->wait_for_output("2/3 joined", 20s)) << node0->output_so_far();
  ASSERT_TRUE(old_node1->send_signal_group(SIGSTOP));
  std::this_thread::sleep_for(3500ms);  // silent for more than two heartbeat intervals (1 s)
  auto node1 = start_node(node(job, 1));
  EXPECT_TRUE(node0->wait_for_output("joined again as node rank 1", 20s)) << node0->output_so_far();
  auto node2 = start_node(node(job, 2));  // after node 1: else it could complete the job with the frozen one
  RunResult r1 = node1->wait(kJobBound);
  RunResult r2 = node2->wait(kJobBound);
  RunResult r0 = node0->wait(kJobBound);
  old_node1->send_signal_group(SIGKILL);
  expect_succeeded({&r0, &r1, &r2});
}

// Text from strangers is escaped before the master logs it (no forged line, no terminal
// escape), and a flood of drops gives a few warnings and one count, not a line each.
TEST(HostileNetwork, PeerTextEscapedAndDropWarningsRateLimited) {
  MultiNodeJob job = new_job(2, "hygiene-job");
  auto node0 = start_master(job);
  ASSERT_TRUE(node0);
  // A frame whose kind (escaped on the wire, a real newline once decoded) forges a log line.
  const std::string body = "x\\nFORGED job succeeded\x1b[2J\nj\n0\n\n";
  if (int fd = connect_loopback(job.port); fd >= 0) {
    std::string frame = length_prefix(static_cast<std::uint32_t>(body.size())) + body;
    (void)::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL);
    std::this_thread::sleep_for(200ms);
    ::close(fd);
  }
  for (int i = 0; i < 80; ++i) {
    if (int fd = connect_loopback(job.port); fd >= 0) {
      (void)::send(fd, "garbage!", 8, MSG_NOSIGNAL);
      std::this_thread::sleep_for(5ms);
      ::close(fd);
    }
  }
  EXPECT_TRUE(node0->wait_for_output("more connections in the last 10.0 s", 20s)) << node0->output_so_far();
  auto node1 = start_node(node(job, 1));
  RunResult r1 = node1->wait(kJobBound);
  RunResult r0 = node0->wait(kJobBound);
  expect_succeeded({&r0, &r1});
  EXPECT_EQ(r0.output.find("\x1b[2J"), std::string::npos) << "a terminal escape from a peer reached the log";
  EXPECT_NE(r0.output.find("\\x1b[2J"), std::string::npos) << r0.output;
  std::istringstream lines(r0.output);
  int drop_lines = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_NE(line.rfind("FORGED", 0), 0u) << "a peer started a log line of its own";
    drop_lines += line.find("rendezvous: dropped") != std::string::npos ? 1 : 0;
  }
  EXPECT_LE(drop_lines, 8) << "81 drops in a few seconds: the first few and one count";
}
