// SshServers: an OpenSSH server in hosts of a NetnsCluster, for fan-out tests. The test makes
// everything in a temporary directory — a host key, a user key, each host's sshd_config, and
// an ssh client config naming the hosts "h1".."hN" — starts `sshd -D -f CONFIG` in each
// chosen host's namespace, and in the destructor kills every sshd by its process group and
// removes the directory, so a failing test cleans up too.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "netns_cluster.h"
#include "process_runner.h"

namespace ddplaunch::testing {

// What one host's sshd sees of the filesystem (each runs in a mount namespace of its own).
struct HostView {
  std::string hidden_dir;         // a tmpfs over it: what was there is gone for this host
  std::string fake_ddplaunch;     // with hidden_dir: a script there named ddplaunch printing this --version line
};

class SshServers {
 public:
  // Empty when sshd and ssh-keygen are installed; otherwise why not.
  static std::string skip_reason();

  // sshd in each of `hosts` (1-based; hosts left out have none: ssh to them is refused).
  // Throws std::runtime_error with the output of what failed.
  SshServers(const NetnsCluster& cluster, const std::vector<int>& hosts, const std::map<int, HostView>& views = {});
  ~SshServers();
  SshServers(const SshServers&) = delete;
  SshServers& operator=(const SshServers&) = delete;

  // "ssh -F DIR/ssh_config": the value for DDPLAUNCH_SSH.
  std::string ssh_command() const;
  static std::string host_name(int host) { return "h" + std::to_string(host); }
  // The pids of the sshd listeners (to tell them from what a test left behind).
  std::vector<pid_t> listener_pids() const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::vector<std::unique_ptr<BackgroundProcess>> servers_;
};

}  // namespace ddplaunch::testing
