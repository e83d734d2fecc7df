// NetnsCluster: thin RAII wrapper over tests/clusters/test-cluster; every network change is made by the
// script, so a person can reproduce any test's cluster by hand with the same commands.
#include "netns_cluster.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "process_runner.h"

#ifndef DDPLAUNCH_SOURCE_DIR
#error "DDPLAUNCH_SOURCE_DIR must be defined (the repository root, to find tests/clusters/test-cluster)"
#endif

namespace ddplaunch::testing {
namespace {

using std::chrono::seconds;

std::string ip_binary() {
  for (const char* candidate : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(candidate, X_OK) == 0) return candidate;
  }
  return "ip";
}

std::string compute_skip_reason() {
  if (::geteuid() != 0) {
    return "needs root: network namespaces and nftables need CAP_NET_ADMIN (run the integration "
           "tests as root, e.g. sudo ctest -L integration)";
  }
  std::string script = NetnsCluster::script_path();
  if (::access(script.c_str(), R_OK) != 0) {
    return "tests/clusters/test-cluster not found at " + script + " (DDPLAUNCH_SOURCE_DIR wrong?)";
  }
  if (run_command({"nft", "--version"}, seconds(10)).exit_code != 0) {
    return "nft (nftables) is not installed; install it: apt-get install nftables";
  }
  // `ip netns list` can work where `ip netns add` cannot (containers without CAP_SYS_ADMIN),
  // so try the real thing with a throwaway namespace.
  std::string probe = "ddplprobe" + std::to_string(::getpid());
  RunResult add = run_command({ip_binary(), "netns", "add", probe}, seconds(10));
  run_command({ip_binary(), "netns", "del", probe}, seconds(10));
  if (add.exit_code != 0) {
    return "cannot create network namespaces here (`ip netns add` failed: " + add.output +
           "); a container needs CAP_SYS_ADMIN and CAP_NET_ADMIN";
  }
  return "";
}

}  // namespace

std::string NetnsCluster::script_path() { return std::string(DDPLAUNCH_SOURCE_DIR) + "/tests/clusters/test-cluster"; }

std::string NetnsCluster::skip_reason() {
  static const std::string reason = compute_skip_reason();
  return reason;
}

std::string NetnsCluster::unique_name(const std::string& prefix) {
  std::string name;
  for (char c : prefix) {
    if (name.size() == 3) break;
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(c))) name += c;
  }
  if (name.empty()) name = "t";
  return name + std::to_string(::getpid() % 100000);
}

NetnsCluster::NetnsCluster(std::string name, int hosts, bool second_nic)
    : name_(std::move(name)), hosts_(hosts), second_nic_(second_nic) {
  std::vector<std::string> argv = {"bash", script_path(), "up", name_, std::to_string(hosts)};
  if (second_nic) argv.push_back("--second-nic");
  RunResult up = run_command(argv, seconds(60));
  if (up.exit_code != 0) {
    // The destructor will not run: clean up here.
    run_command({"bash", script_path(), "down", name_}, seconds(60));
    throw std::runtime_error("NetnsCluster: `test-cluster up " + name_ + " " + std::to_string(hosts) +
                             "` failed (exit " + std::to_string(up.exit_code) +
                             (up.timed_out ? ", timed out" : "") + "): " + up.output);
  }
}

NetnsCluster::~NetnsCluster() { run_command({"bash", script_path(), "down", name_}, seconds(60)); }

void NetnsCluster::check_host(int host, const char* what) const {
  if (host < 1 || host > hosts_) {
    throw std::out_of_range(std::string("NetnsCluster::") + what + ": host " + std::to_string(host) +
                            " does not exist; cluster " + name_ + " has hosts 1.." +
                            std::to_string(hosts_));
  }
}

std::string NetnsCluster::namespace_of(int host) const {
  check_host(host, "namespace_of");
  return name_ + "-h" + std::to_string(host);
}

std::string NetnsCluster::address(int host) const {
  check_host(host, "address");
  return "198.18.0." + std::to_string(10 + host);
}

std::string NetnsCluster::ipv6_address(int host) const {
  check_host(host, "ipv6_address");
  return "2001:2::" + std::to_string(10 + host);
}

std::string NetnsCluster::second_address(int host) const {
  check_host(host, "second_address");
  if (!second_nic_) {
    throw std::logic_error("NetnsCluster::second_address: cluster " + name_ +
                           " was built without a second NIC; pass second_nic = true");
  }
  return "198.18.0." + std::to_string(138 + host);
}

std::vector<std::string> NetnsCluster::exec_argv(int host, const std::vector<std::string>& argv) const {
  std::vector<std::string> full = {ip_binary(), "netns", "exec", namespace_of(host)};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

std::set<pid_t> NetnsCluster::pids_in(int host) const {
  std::istringstream listed(run_command({ip_binary(), "netns", "pids", namespace_of(host)}, seconds(10)).output);
  std::set<pid_t> pids;
  for (pid_t pid; listed >> pid;) pids.insert(pid);
  return pids;
}

std::set<pid_t> NetnsCluster::processes_left(int host, std::chrono::milliseconds timeout,
                                             const std::vector<pid_t>& spared) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::set<pid_t> left;
  do {
    left = pids_in(host);
    for (pid_t pid : spared) left.erase(pid);
    if (left.empty()) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  return left;
}

void NetnsCluster::run_script(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"bash", script_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = run_command(argv, seconds(30));
  if (r.exit_code != 0) {
    std::string command = "test-cluster";
    for (const auto& a : args) command += " " + a;
    throw std::runtime_error("NetnsCluster: `" + command + "` failed (exit " +
                             std::to_string(r.exit_code) + (r.timed_out ? ", timed out" : "") +
                             "): " + r.output);
  }
}

void NetnsCluster::block_port(int host, int port) const {
  check_host(host, "block_port");
  run_script({"block", name_, std::to_string(host), std::to_string(port)});
}

void NetnsCluster::unblock_port(int host, int port) const {
  check_host(host, "unblock_port");
  run_script({"unblock", name_, std::to_string(host), std::to_string(port)});
}

void NetnsCluster::set_link(int host, bool up) const {
  check_host(host, "set_link");
  run_script({"link", name_, std::to_string(host), up ? "up" : "down"});
}

void NetnsCluster::partition(const std::vector<int>& side_a, const std::vector<int>& side_b) const {
  auto list = [this](const std::vector<int>& side) {
    std::string out;
    for (int host : side) {
      check_host(host, "partition");
      out += (out.empty() ? "" : ",") + std::to_string(host);
    }
    return out;
  };
  run_script({"partition", name_, list(side_a), list(side_b)});
}

void NetnsCluster::heal() const { run_script({"heal", name_}); }

}  // namespace ddplaunch::testing
