// Real etcd servers for the etcd client's tests: one or more members on 127.0.0.1 (free
// ports, a data dir under /tmp), each killed by its PID (SIGKILL) and its data removed when
// the cluster goes out of scope, also when a test fails.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process_runner.h"

namespace ddplaunch::testing {

inline constexpr const char* kEtcdBinary = "/usr/bin/etcd";
inline constexpr const char* kEtcdctlBinary = "/usr/bin/etcdctl";
inline constexpr const char* kNoEtcd =
    "etcd is not installed at /usr/bin/etcd (scripts/install-deps.sh installs etcd-server)";

// Where one member runs: 127.0.0.1 of this machine (free ports), or a netns host (its own
// address and network, so etcd's usual ports 2379/2380, run through exec_prefix).
struct EtcdHost {
  std::string address = "127.0.0.1";
  std::vector<std::string> exec_prefix;  // e.g. NetnsCluster::exec_argv(host, {})
};

// Clients served over TLS (https:// client URLs); with client_ca, only clients with a
// certificate that CA signed (etcd's --client-cert-auth --trusted-ca-file).
struct EtcdServerTls {
  std::string cert, key;
  std::string client_ca;  // "" = any client
};

// One launcher of an etcd job on this host: its own coordinator port (the launchers share one
// host), a 2 s lease, the heartbeats of the membership tests, a quick stop, and no run history
// (a past run's step times would seed the hang watch, and the deadlines shown would depend on
// earlier tests). `flags` come after these (later flags win), then `-- program`.
struct EtcdLauncher {
  std::string launcher;   // the ddplaunch binary
  std::string endpoints;  // EtcdCluster::endpoints()
  std::string job_id;     // "" gives no --rdzv-id
  int nodes = 2;
  int spares = 0;
  std::string conf{};  // more --rdzv-conf KEY=VALUE pairs (comma-separated)
  std::vector<std::string> flags{};
  std::vector<std::string> program{};
};
std::vector<std::string> etcd_launcher_argv(const EtcdLauncher& launcher);

// etcdctl (v3 API) against `endpoints`, bounded to 20 s.
RunResult run_etcdctl(const std::string& endpoints, const std::vector<std::string>& args);

class EtcdCluster {
 public:
  EtcdCluster() = default;
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  static bool available();  // the etcd binary is installed
  void serve_tls(EtcdServerTls tls) { tls_ = std::move(tls); }  // before start
  // More etcd flags for every (re)start after this, e.g. {"--auth-token-ttl", "1"}.
  void add_flags(std::vector<std::string> flags) { flags_.insert(flags_.end(), flags.begin(), flags.end()); }
  // Starts `members` members and waits until each serves clients; "" or why not.
  std::string start(int members, std::chrono::milliseconds bound = std::chrono::seconds(40));
  std::string start_on(const std::vector<EtcdHost>& hosts, std::chrono::milliseconds bound = std::chrono::seconds(40));
  // Starts a killed member again (same name, data and ports); "" or why not.
  std::string restart(int member, std::chrono::milliseconds bound = std::chrono::seconds(40));
  std::string endpoint(int member) const;  // "127.0.0.1:PORT"
  std::string endpoints() const;           // every member's, comma-separated
  void kill(int member);                   // SIGKILL, then reap
  bool signal(int member, int sig);        // e.g. SIGSTOP / SIGCONT: a stalled member
  // Turns etcd's authentication on with user root and `password` (etcdctl, v3 API, over
  // plain http); "" or why not.
  std::string enable_auth(const std::string& password);
  // Makes `member` etcd's leader (etcdctl move-leader, run where that member runs); "" or why not.
  std::string move_leader(int member);
  std::string log(int member) const;

 private:
  RunResult etcdctl(int member, const std::string& urls, const std::vector<std::string>& args) const;
  std::string launch(int member);
  std::string wait_ready(int member, std::chrono::steady_clock::time_point deadline);
  std::string dir_;
  std::optional<EtcdServerTls> tls_;
  std::vector<std::string> flags_;
  std::vector<EtcdHost> hosts_;
  std::string initial_cluster_, token_;
  std::vector<int> client_ports_;
  std::vector<int> peer_ports_;
  std::vector<std::unique_ptr<BackgroundProcess>> members_;
};

}  // namespace ddplaunch::testing
