// Real etcd servers for tests; see etcd_cluster.h.
#include "etcd_cluster.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>

namespace ddplaunch::testing {

bool EtcdCluster::available() { return ::access(kEtcdBinary, X_OK) == 0; }

EtcdCluster::~EtcdCluster() {
  members_.clear();  // BackgroundProcess: SIGKILL to its process group, then reaped
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string EtcdCluster::start(int members, std::chrono::milliseconds bound) {
  dir_ = temp_dir("ddplaunch-etcd-");
  std::string initial;
  for (int i = 0; i < members; ++i) {
    client_ports_.push_back(free_tcp_port());
    peer_ports_.push_back(free_tcp_port());
    if (client_ports_.back() < 0 || peer_ports_.back() < 0) return "no free TCP port for etcd";
    initial += (i ? "," : "") + std::string("n") + std::to_string(i) + "=http://127.0.0.1:" +
               std::to_string(peer_ports_.back());
  }
  const std::string token = "ddplaunch-test-" + std::to_string(::getpid()) + "-" + std::to_string(client_ports_[0]);
  for (int i = 0; i < members; ++i) {
    const std::string client = "http://127.0.0.1:" + std::to_string(client_ports_[i]);
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_ports_[i]);
    auto p = std::make_unique<BackgroundProcess>();
    if (!p->start({kEtcdBinary, "--name", "n" + std::to_string(i), "--data-dir", dir_ + "/n" + std::to_string(i),
                   "--listen-client-urls", client, "--advertise-client-urls", client, "--listen-peer-urls", peer,
                   "--initial-advertise-peer-urls", peer, "--initial-cluster", initial, "--initial-cluster-state",
                   "new", "--initial-cluster-token", token}))
      return "etcd did not start: " + p->output_so_far();
    members_.push_back(std::move(p));
  }
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (int i = 0; i < members; ++i) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (!members_[i]->wait_for_output("ready to serve client requests", std::max(left, std::chrono::milliseconds(1))))
      return "etcd member " + std::to_string(i) + " not ready within " + std::to_string(bound.count()) +
             " ms; its output:\n" + members_[i]->output_so_far();
  }
  return {};
}

std::string EtcdCluster::endpoint(int member) const {
  return "127.0.0.1:" + std::to_string(client_ports_.at(member));
}

std::string EtcdCluster::endpoints() const {
  std::string out;
  for (std::size_t i = 0; i < client_ports_.size(); ++i) out += (i ? "," : "") + endpoint(static_cast<int>(i));
  return out;
}

void EtcdCluster::kill(int member) {
  auto& p = members_.at(member);
  p->send_signal(SIGKILL);
  p->wait(std::chrono::seconds(5));
}

std::string EtcdCluster::log(int member) const { return members_.at(member)->output_so_far(); }

}  // namespace ddplaunch::testing
