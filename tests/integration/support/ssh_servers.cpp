// sshd per netns host for fan-out tests: see ssh_servers.h.
#include "ssh_servers.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ddplaunch::testing {

namespace {

using namespace std::chrono;

constexpr const char* kSshd = "/usr/sbin/sshd";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("SshServers: cannot write " + path);
}

void make_key(const std::string& path) {
  RunResult r = run_command({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ddplaunch-test", "-f", path},
                            seconds(30));
  if (r.exit_code != 0) throw std::runtime_error("SshServers: ssh-keygen failed: " + r.output);
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

// The home directory sshd gives this user's sessions (the password database's, not $HOME).
std::string login_home() {
  const passwd* entry = getpwuid(geteuid());
  return entry && entry->pw_dir ? entry->pw_dir : "/root";
}

}  // namespace

std::string SshServers::skip_reason() {
  if (access(kSshd, X_OK) != 0) return "sshd is not installed (apt-get install openssh-server; scripts/install-deps.sh)";
  if (run_command({"ssh-keygen", "-?"}, seconds(10)).exit_code == 127) return "ssh-keygen is not installed (openssh-client)";
  if (run_command({"ssh", "-V"}, seconds(10)).exit_code == 127) return "ssh is not installed (openssh-client)";
  return "";
}

SshServers::SshServers(const NetnsCluster& cluster, const std::vector<int>& hosts,
                       const std::map<int, HostView>& views)
    : dir_(temp_dir("ddplaunch-ssh-")) {
  try {
    make_key(dir_ + "/host_key");
    make_key(dir_ + "/user_key");
    std::string host_key = read_file(dir_ + "/host_key.pub");
    host_key = host_key.substr(0, host_key.rfind(' '));  // "ssh-ed25519 AAAA..." without the comment
    write_file(dir_ + "/authorized_keys", read_file(dir_ + "/user_key.pub"));
    std::string client, known;
    for (int host = 1; host <= cluster.hosts(); ++host) {
      client += "Host " + host_name(host) + "\n  HostName " + cluster.address(host) + "\n";
      known += host_name(host) + "," + cluster.address(host) + " " + host_key + "\n";
    }
    client += "Host *\n  User root\n  IdentityFile " + dir_ + "/user_key\n  IdentitiesOnly yes\n  UserKnownHostsFile " +
              dir_ + "/known_hosts\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  LogLevel ERROR\n";
    write_file(dir_ + "/ssh_config", client);
    write_file(dir_ + "/known_hosts", known);
    std::filesystem::create_directories("/run/sshd");  // sshd's privilege-separation directory
    for (int host : hosts) {
      const std::string config = dir_ + "/sshd_config_h" + std::to_string(host);
      write_file(config, "ListenAddress " + cluster.address(host) + "\nPort 22\nHostKey " + dir_ +
                             "/host_key\nPidFile none\nAuthorizedKeysFile " + dir_ +
                             "/authorized_keys\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                             "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPrintMotd no\nLogLevel INFO\n");
      // A mount namespace of its own, so a hidden directory is hidden for this host only. The
      // login shell's start-up files are hidden too: they belong to this machine, not to the
      // test (pyenv's `init` in root's ~/.bashrc waits on a lock every login shares, so a
      // few tests logging in at once queued past the fan-out's check bound).
      const std::string home = quoted(login_home());
      std::string script = "for f in " + home + "/.bashrc " + home + "/.profile " + home + "/.bash_profile " + home +
                           "/.bash_login; do [ -f \"$f\" ] && { mount --bind /dev/null \"$f\" || exit 1; }; done; ";
      if (auto view = views.find(host); view != views.end()) {
        script += "mount -t tmpfs ddplaunch-test " + quoted(view->second.hidden_dir) + " || exit 1; ";
        if (!view->second.fake_ddplaunch.empty())
          script += "printf '#!/bin/sh\\necho \"%s\"\\n' " + quoted(view->second.fake_ddplaunch) + " > " +
                    quoted(view->second.hidden_dir + "/ddplaunch") + " && chmod +x " +
                    quoted(view->second.hidden_dir + "/ddplaunch") + " || exit 1; ";
      }
      script += std::string("exec ") + kSshd + " -D -e -f " + quoted(config);
      servers_.push_back(std::make_unique<BackgroundProcess>());
      auto& server = *servers_.back();
      if (!server.start(cluster.exec_argv(host, {"unshare", "-m", "--propagation", "private", "sh", "-c", script})))
        throw std::runtime_error("SshServers: cannot start sshd: " + server.output_so_far());
      if (!server.wait_for_output("Server listening", seconds(20)))
        throw std::runtime_error("SshServers: sshd on host " + std::to_string(host) +
                                 " did not start listening: " + server.output_so_far());
    }
  } catch (...) {
    servers_.clear();
    std::filesystem::remove_all(dir_);
    throw;
  }
}

SshServers::~SshServers() {
  servers_.clear();  // each BackgroundProcess SIGKILLs its sshd's process group and reaps it
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string SshServers::ssh_command() const { return "ssh -F " + dir_ + "/ssh_config"; }

std::vector<pid_t> SshServers::listener_pids() const {
  std::vector<pid_t> pids;
  for (const auto& s : servers_) pids.push_back(s->pid());
  return pids;
}

}  // namespace ddplaunch::testing
