// NetnsCluster: N fake hosts for one integration test, built by tests/clusters/test-cluster from Linux
// network namespaces (NAME-h1..NAME-hN on a bridge in NAME-br, addresses in 198.18.0.0/24 and 2001:2::/64).
// Created in the constructor, removed in the destructor, so a failing test still cleans up.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

namespace ddplaunch::testing {

class NetnsCluster {
 public:
  // Empty when clusters can be built here; otherwise why not (not root, `ip netns` unusable,
  // script or nft missing). Use: if (auto r = NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  static std::string skip_reason();

  // A name of at most 8 characters from `prefix` (first 3 of [a-z0-9]) and this process's pid,
  // so that tests running in parallel (ctest -j) do not remove each other's clusters.
  static std::string unique_name(const std::string& prefix);

  // Runs `test-cluster up name hosts [--second-nic]` (which first removes leftovers of `name`).
  // name: 1-8 characters [a-z0-9]; hosts: 1-100. Throws std::runtime_error with the script's
  // output if the cluster cannot be built (after removing whatever was half made).
  NetnsCluster(std::string name, int hosts, bool second_nic = false);
  ~NetnsCluster();  // `test-cluster down name`: kills processes left inside, deletes namespaces
  NetnsCluster(const NetnsCluster&) = delete;
  NetnsCluster& operator=(const NetnsCluster&) = delete;

  const std::string& name() const { return name_; }
  int hosts() const { return hosts_; }
  std::string namespace_of(int host) const;   // "NAME-h<host>"
  std::string address(int host) const;        // eth0: "198.18.0.<10+host>" (subnet /25)
  std::string ipv6_address(int host) const;   // eth0 too: "2001:2::<10+host>" (subnet /64)
  std::string second_address(int host) const; // eth1: "198.18.0.<138+host>"; needs second_nic

  // {"ip", "netns", "exec", "NAME-h<host>", argv...}: pass to run_command / BackgroundProcess.
  std::vector<std::string> exec_argv(int host, const std::vector<std::string>& argv) const;

  // The processes in host's namespace (`ip netns pids`).
  std::set<pid_t> pids_in(int host) const;
  // Processes left in host's namespace (its launcher, orphan guard, workers), but `spared`:
  // polled every 100 ms until none or `timeout`; the pids still there (empty: none).
  std::set<pid_t> processes_left(int host, std::chrono::milliseconds timeout,
                                 const std::vector<pid_t>& spared = {}) const;

  // nftables in host's namespace drops incoming TCP to port (no RST: connects time out).
  // These throw std::runtime_error with the script's output on failure.
  void block_port(int host, int port) const;
  void unblock_port(int host, int port) const;
  // Sets host's eth0 down (cut link) or up again.
  void set_link(int host, bool up) const;
  // Hosts of `side_a` and of `side_b` drop each other's packets (a partition: no RST, other
  // hosts still reach both sides); heal() undoes every partition.
  void partition(const std::vector<int>& side_a, const std::vector<int>& side_b) const;
  void heal() const;

  static std::string script_path();  // <source dir>/tests/clusters/test-cluster

 private:
  void check_host(int host, const char* what) const;
  void run_script(const std::vector<std::string>& args) const;

  std::string name_;
  int hosts_;
  bool second_nic_;
};

}  // namespace ddplaunch::testing
