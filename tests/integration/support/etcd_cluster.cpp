// Real etcd servers for tests; see etcd_cluster.h.
#include "etcd_cluster.h"

#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <thread>

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
  return start_on(std::vector<EtcdHost>(static_cast<std::size_t>(members)), bound);
}

std::string EtcdCluster::start_on(const std::vector<EtcdHost>& hosts, std::chrono::milliseconds bound) {
  dir_ = temp_dir("ddplaunch-etcd-");
  hosts_ = hosts;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const bool here = hosts[i].exec_prefix.empty();  // one network for all: ports of their own
    client_ports_.push_back(here ? free_tcp_port() : 2379);
    peer_ports_.push_back(here ? free_tcp_port() : 2380);
    if (client_ports_.back() < 0 || peer_ports_.back() < 0) return "no free TCP port for etcd";
    initial_cluster_ += (i ? "," : "") + std::string("n") + std::to_string(i) + "=http://" + hosts[i].address + ":" +
                        std::to_string(peer_ports_.back());
  }
  token_ = "ddplaunch-test-" + std::to_string(::getpid()) + "-" + std::to_string(client_ports_[0]);
  members_.resize(hosts.size());
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (std::size_t i = 0; i < hosts.size(); ++i)
    if (std::string error = launch(static_cast<int>(i)); !error.empty()) return error;
  for (std::size_t i = 0; i < hosts.size(); ++i)
    if (std::string error = wait_ready(static_cast<int>(i), deadline); !error.empty()) return error;
  return {};
}

std::string EtcdCluster::launch(int i) {
  const EtcdHost& host = hosts_.at(i);
  const std::string client = (tls_ ? "https://" : "http://") + host.address + ":" + std::to_string(client_ports_[i]);
  const std::string peer = "http://" + host.address + ":" + std::to_string(peer_ports_[i]);
  std::vector<std::string> argv = host.exec_prefix;
  for (const std::string& a :
       {std::string(kEtcdBinary), std::string("--name"), "n" + std::to_string(i), std::string("--data-dir"),
        dir_ + "/n" + std::to_string(i), std::string("--listen-client-urls"), client,
        std::string("--advertise-client-urls"), client, std::string("--listen-peer-urls"), peer,
        std::string("--initial-advertise-peer-urls"), peer, std::string("--initial-cluster"), initial_cluster_,
        std::string("--initial-cluster-state"), std::string("new"), std::string("--initial-cluster-token"), token_})
    argv.push_back(a);
  if (tls_) {
    for (const std::string& a : {std::string("--cert-file"), tls_->cert, std::string("--key-file"), tls_->key})
      argv.push_back(a);
    if (!tls_->client_ca.empty())
      for (const std::string& a : {std::string("--client-cert-auth"), std::string("--trusted-ca-file"), tls_->client_ca})
        argv.push_back(a);
  }
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  auto p = std::make_unique<BackgroundProcess>();
  if (!p->start(argv)) return "etcd did not start: " + p->output_so_far();
  members_[i] = std::move(p);
  return {};
}

std::string EtcdCluster::wait_ready(int i, std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (!members_[i]->wait_for_output("ready to serve client requests", std::max(left, std::chrono::milliseconds(1))))
    return "etcd member " + std::to_string(i) + " not ready in time; its output:\n" + members_[i]->output_so_far();
  return {};
}

std::string EtcdCluster::restart(int member, std::chrono::milliseconds bound) {
  if (std::string error = launch(member); !error.empty()) return error;
  return wait_ready(member, std::chrono::steady_clock::now() + bound);
}

std::string EtcdCluster::endpoint(int member) const {
  return hosts_.at(member).address + ":" + std::to_string(client_ports_.at(member));
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

bool EtcdCluster::signal(int member, int sig) { return members_.at(member)->send_signal(sig); }

// etcdctl (v3 API, over plain http) where `member` runs, against `urls`.
RunResult EtcdCluster::etcdctl(int member, const std::string& urls, const std::vector<std::string>& args) const {
  std::vector<std::string> argv = hosts_.at(member).exec_prefix;
  argv.insert(argv.end(), {kEtcdctlBinary, "--endpoints", urls});
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, std::chrono::seconds(20), {{"ETCDCTL_API", "3"}});
}

std::string EtcdCluster::enable_auth(const std::string& password) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"user", "add", "root:" + password}, {"auth", "enable"}}) {
    RunResult r = etcdctl(0, "http://" + endpoint(0), args);
    if (r.exit_code != 0) return "etcdctl " + args[0] + " " + args[1] + " failed:\n" + r.output;
  }
  return {};
}

std::string EtcdCluster::move_leader(int member) {
  const std::string own = "http://" + endpoint(member);
  // `endpoint status -w json` names the member behind the endpoint and the current leader (decimal ids).
  auto id_after = [](const std::string& text, const std::string& key) -> std::string {
    const auto at = text.find("\"" + key + "\":");
    if (at == std::string::npos) return {};
    std::size_t begin = at + key.size() + 3, end = begin;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    return text.substr(begin, end - begin);
  };
  RunResult status = etcdctl(member, own, {"endpoint", "status", "-w", "json"});
  const std::string id = id_after(status.output, "member_id"), leader = id_after(status.output, "leader");
  if (status.exit_code != 0 || id.empty() || leader.empty())
    return "etcdctl endpoint status of member " + std::to_string(member) + " failed:\n" + status.output;
  if (id == leader) return {};
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", std::stoull(id));
  // move-leader goes to the current leader: every member's endpoint is given.
  std::string all;
  for (std::size_t i = 0; i < client_ports_.size(); ++i) all += (i ? ",http://" : "http://") + endpoint(static_cast<int>(i));
  RunResult moved = etcdctl(member, all, {"move-leader", hex});
  if (moved.exit_code != 0) return "etcdctl move-leader " + std::string(hex) + " failed:\n" + moved.output;
  for (int attempt = 0; attempt < 20; ++attempt) {  // bounded: 20 x 100 ms
    if (id_after(etcdctl(member, own, {"endpoint", "status", "-w", "json"}).output, "leader") == id) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "etcdctl move-leader " + std::string(hex) + " answered, but member " + std::to_string(member) +
         " did not become the leader:\n" + moved.output;
}

std::string EtcdCluster::log(int member) const { return members_.at(member)->output_so_far(); }

std::vector<std::string> etcd_launcher_argv(const EtcdLauncher& l) {
  std::vector<std::string> argv{l.launcher, "--rdzv-backend", "etcd", "--rdzv-endpoint", l.endpoints};
  if (!l.job_id.empty()) argv.insert(argv.end(), {"--rdzv-id", l.job_id});
  argv.insert(argv.end(), {"--nnodes", std::to_string(l.nodes), "--spares", std::to_string(l.spares),
                           "--nproc-per-node", "1", "--rdzv-conf",
                           "lease_ttl=2,coordinator_port=" + std::to_string(free_tcp_port()) + (l.conf.empty() ? "" : "," + l.conf),
                           "--heartbeat-interval",
                           "0.2", "--heartbeat-timeout", "2", "--grace", "1", "--no-peer-probe", "--history-file",
                           "off"});
  argv.insert(argv.end(), l.flags.begin(), l.flags.end());
  argv.push_back("--");
  argv.insert(argv.end(), l.program.begin(), l.program.end());
  return argv;
}

RunResult run_etcdctl(const std::string& endpoints, const std::vector<std::string>& args) {
  std::vector<std::string> argv{kEtcdctlBinary, "--endpoints", endpoints};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, std::chrono::seconds(20), {{"ETCDCTL_API", "3"}});
}

}  // namespace ddplaunch::testing
