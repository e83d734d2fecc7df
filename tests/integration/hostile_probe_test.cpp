// Hostile peers against the peer probe: strangers holding idle connections to a
// node's probe listeners during start-up — from the same address as the real peers, the hard
// case on one machine — must not make the probe fail and the master refuse the job.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "multi_node_job.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono_literals;

namespace {

constexpr auto kJobBound = 60s;

struct Endpoint {
  std::string address;
  int port = 0;
};

// The IPv4 TCP endpoints `pid` listens on (its sockets in /proc/net/tcp in state LISTEN),
// but `except_port` (the rendezvous): on a node before its workers start, the probe listeners.
std::vector<Endpoint> listening_endpoints(pid_t pid, int except_port) {
  std::set<std::string> inodes;
  const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  if (DIR* dir = ::opendir(fd_dir.c_str())) {
    while (dirent* e = ::readdir(dir)) {
      char target[64] = {};
      if (::readlink((fd_dir + "/" + e->d_name).c_str(), target, sizeof target - 1) > 0 &&
          std::string(target).rfind("socket:[", 0) == 0)
        inodes.insert(std::string(target).substr(8, std::string(target).size() - 9));
    }
    ::closedir(dir);
  }
  std::vector<Endpoint> out;
  std::ifstream tcp("/proc/" + std::to_string(pid) + "/net/tcp");
  std::string line;
  std::getline(tcp, line);  // header
  while (std::getline(tcp, line)) {
    std::istringstream in(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    in >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    if (state != "0A" || !inodes.count(inode) || local.size() != 13) continue;
    in_addr address{};
    address.s_addr = static_cast<in_addr_t>(std::stoul(local.substr(0, 8), nullptr, 16));  // as the kernel stores it
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &address, text, sizeof text);
    const int port = static_cast<int>(std::stoul(local.substr(9), nullptr, 16));
    if (port != except_port) out.push_back({text, port});
  }
  return out;
}

// Keeps `count` idle connections open to the endpoints (round robin), opening a new one each
// time the listener closes one, until destroyed (bounded: 120 s). Sends nothing, ever.
class IdleFlood {
 public:
  IdleFlood(std::vector<Endpoint> endpoints, int count) : endpoints_(std::move(endpoints)) {
    thread_ = std::thread([this, count] { run(count); });
  }
  ~IdleFlood() {
    stop_ = true;
    thread_.join();
  }
  int connected() const { return connected_; }  // connections the listeners accepted so far

 private:
  int open(std::size_t index) {
    const Endpoint& e = endpoints_[index % endpoints_.size()];
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(e.port));
    ::inet_pton(AF_INET, e.address.c_str(), &a.sin_addr);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
      ::close(fd);
      return -1;
    }
    return fd;
  }
  void run(int count) {
    std::vector<pollfd> fds(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < fds.size(); ++i) fds[i] = {open(i), POLLIN | POLLOUT, 0};
    const auto until = std::chrono::steady_clock::now() + 120s;
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      if (::poll(fds.data(), fds.size(), 20) < 0) break;
      for (std::size_t i = 0; i < fds.size(); ++i) {
        pollfd& p = fds[i];
        if (p.fd < 0) {
          p = {open(i), POLLIN | POLLOUT, 0};
          continue;
        }
        if ((p.revents & POLLOUT) && !(p.revents & (POLLERR | POLLHUP))) {
          ++connected_;
          p.events = POLLIN;  // connected: now only wait for the listener to close it
          continue;
        }
        char byte;
        if ((p.revents & (POLLERR | POLLHUP)) || ((p.revents & POLLIN) && ::recv(p.fd, &byte, 1, MSG_DONTWAIT) <= 0)) {
          ::close(p.fd);
          p = {open(i), POLLIN | POLLOUT, 0};
        }
      }
    }
    for (auto& p : fds)
      if (p.fd >= 0) ::close(p.fd);
  }

  std::vector<Endpoint> endpoints_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connected_{0};
  std::thread thread_;
};

}  // namespace

// 256 idle connections to a probe listener must not make the master refuse the job ("firewall",
// exit 2 on every node): the listener gives a source address 16 connections, evicts the
// oldest that sent no hello when more come, closes one without a hello after 1 s, answers only
// a hello MACed with the token (when there is one), and a prober tries a failed link twice.
TEST(HostileProbe, IdleFloodOfTheProbeListenerDuringStartupDoesNotStopTheJob) {
  for (bool token : {true, false}) {
    SCOPED_TRACE(token ? "with a token" : "without a token");
    std::vector<std::string> flags;
    if (token) flags = {"--token", "probe-tok"};
    // Three nodes: on one machine the probe runs the ring 0 -> 1 -> 2 -> 0, so node 2, started
    // last, probes node 0's listeners, which the flood holds from before node 2 starts.
    dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 3, "hostile-probe", flags);
    std::vector<std::string> worker = {FAKE_WORKER_BIN, "--exit", "0"};
    std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
    nodes.push_back(dt::start_node(dt::node_argv(job, 0, 1, {}, worker)));
    ASSERT_TRUE(dt::wait_listening(*nodes[0])) << nodes[0]->output_so_far();
    nodes.push_back(dt::start_node(dt::node_argv(job, 1, 1, {}, worker)));
    std::vector<Endpoint> listeners;  // opened right after the rendezvous
    for (int i = 0; i < 500 && listeners.empty(); ++i) {
      std::this_thread::sleep_for(10ms);
      listeners = listening_endpoints(nodes[0]->pid(), job.port);
    }
    ASSERT_FALSE(listeners.empty()) << "node 0 has no probe listener";
    IdleFlood flood(listeners, 300);
    for (int i = 0; i < 3000 && flood.connected() < 300; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_GE(flood.connected(), 300) << "the flood never got going";

    nodes.push_back(dt::start_node(dt::node_argv(job, 2, 1, {}, worker)));
    auto results = dt::wait_all(nodes, kJobBound);
    for (std::size_t r = 0; r < results.size(); ++r)
      EXPECT_EQ(results[r].exit_code, 0) << "node " << r << ":\n" << results[r].output;
    EXPECT_NE(results[2].output.find("link(s) to test"), std::string::npos) << results[2].output;
    EXPECT_EQ(results[2].output.find("peer probe: 0 link(s)"), std::string::npos) << "node 2 probed nothing:\n"
                                                                                  << results[2].output;
  }
}
