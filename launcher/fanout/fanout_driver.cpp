// The fan-out pipeline: hosts → local config → host checks → master → nodes. See fanout_driver.h.
#include "fanout/fanout_driver.h"

#include "config/token_source.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/asio/io_context.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "config/job_setup.h"
#include "ddplaunch/cluster/host_selection.h"
#include "ddplaunch/rendezvous/token_proof.h"
#include "ddplaunch/base/exit_codes.h"
#include "fanout/fanout_job.h"
#include "fanout/host_check.h"
#include "fanout/remote_command.h"
#include "fanout/ssh_sessions.h"
#include "fanout/stdin_control.h"

namespace ddplaunch::fanout {

namespace {

constexpr int kDefaultRendezvousPort = 29400;
constexpr int kParallelChecks = 32;          // ssh sessions at once while checking
constexpr double kCheckBeyondConnectS = 20;  // a check's bound: ssh's connect timeout plus this
constexpr std::size_t kMaxHostfileBytes = 1 << 20;
constexpr std::size_t kMaxCheckOutput = 64 * 1024;

int fail(const std::vector<std::string>& errors) {
  for (const auto& e : errors) spdlog::error("{}", e);
  return kExitConfigError;
}

cluster::HostSelection read_hosts(const FanoutFlags& flags) {
  if (!flags.hosts.empty() && !flags.hostfile.empty())
    return {{}, "--hosts and --hostfile both name the hosts: keep one"};
  cluster::HostSelection all;
  if (!flags.hosts.empty()) {
    all = cluster::parse_host_list(flags.hosts);
  } else {
    std::error_code ec;
    auto size = std::filesystem::file_size(flags.hostfile, ec);
    if (ec) return {{}, fmt::format("--hostfile {}: cannot read it: {}", flags.hostfile, ec.message())};
    if (size > kMaxHostfileBytes)
      return {{}, fmt::format("--hostfile {}: {} bytes is too large for a hostfile", flags.hostfile, size)};
    std::ifstream in(flags.hostfile);
    std::stringstream text;
    text << in.rdbuf();
    all = cluster::parse_hostfile(text.str(), flags.hostfile);
  }
  if (!all.ok()) return all;
  return cluster::select_hosts(std::move(all), flags.include, flags.exclude);
}

// The config this terminal's command line gives, for what the fan-out itself needs (the
// program, the grace, the connect timeout, a token or endpoint the user chose); the node
// count and ranks are the fan-out's to set.
JobSetup local_setup(const CommandLine& cl, const Environment& env, int host_count) {
  CommandLine local = cl;
  JobSetup refused;
  std::erase_if(local.settings, [&](const auto& setting) {
    if (setting.first == "nodes" && setting.second != std::to_string(host_count))
      refused.errors.push_back(fmt::format("--nnodes {} but {} host(s) selected: with --hosts/--hostfile every host "
                                           "is one node (leave --nnodes out)",
                                           setting.second, host_count));
    if (setting.first == "node_rank")
      refused.errors.push_back("--node-rank with --hosts/--hostfile: the fan-out numbers the hosts in order");
    return setting.first == "nodes" || setting.first == "membership.min_nodes" || setting.first == "node_rank" ||
           setting.first == "standalone";
  });
  if (!refused.errors.empty()) return refused;
  return resolve_job_setup(local, env);
}

std::string this_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("ddplaunch") : path.string();
}

// Runs the check on every host, at most kParallelChecks at once, each bounded in time.
std::vector<CheckRun> run_checks(boost::asio::io_context& io, const SshCommand& ssh,
                                 const std::vector<cluster::FanoutHost>& hosts, const std::string& command,
                                 const std::vector<std::string>& env) {
  const double bound_s = ssh.connect_timeout_s + kCheckBeyondConnectS;
  std::vector<CheckRun> runs(hosts.size());
  std::size_t next = 0;
  std::function<void()> start_next;
  SshSessions sessions(io, SessionCallbacks{
                               [&](int i, OutputStream stream, std::string_view line) {
                                 std::string& text = stream == OutputStream::Stdout ? runs[i].output : runs[i].errors;
                                 if (text.size() < kMaxCheckOutput) text.append(line).append("\n");
                               },
                               [&](int i, const SessionEnd& end) {
                                 runs[i].status = end.status;
                                 runs[i].timed_out = end.timed_out;
                                 runs[i].timeout_s = bound_s;
                                 start_next();
                               }});
  start_next = [&] {
    while (next < hosts.size() && sessions.running() < kParallelChecks) {
      const std::size_t i = next++;
      std::string error = sessions.start(static_cast<int>(i), ssh_argv(ssh, hosts[i].name, command), env, false,
                                         std::chrono::milliseconds(static_cast<long>(bound_s * 1000)));
      if (!error.empty()) runs[i].errors = error, runs[i].status.code = 255;
    }
    if (next == hosts.size() && sessions.running() == 0) sessions.close();
  };
  start_next();
  io.run();
  io.restart();
  return runs;
}

// node 0's rendezvous endpoint: --rdzv-endpoint when given, else the address ssh reached the
// first host on (the server side of its $SSH_CONNECTION), which the other hosts can reach
// too when they share its network; its name when that is unknown.
std::string choose_master(const LaunchConfig& config, const std::string& first_host, const HostReport& first) {
  if (!config.master.empty()) {
    spdlog::info("master: {} (from --rdzv-endpoint)", config.master);
    return config.master;
  }
  std::string address = first.reached_address.empty() ? first_host : first.reached_address;
  std::string endpoint = fmt::format("{}:{}", address.find(':') != std::string::npos ? "[" + address + "]" : address,
                                     kDefaultRendezvousPort);
  spdlog::info("master: node 0 = {} at {} ({}); rendezvous port {} — pass --rdzv-endpoint ADDR:PORT to choose another",
               first_host, address,
               first.reached_address.empty() ? "its name: $SSH_CONNECTION was not set there"
                                             : "the address ssh reached it on, from its $SSH_CONNECTION",
               kDefaultRendezvousPort);
  return endpoint;
}

}  // namespace

namespace {
constexpr std::size_t kMaxEnvFileBytes = 1 << 20;

Result<std::vector<std::pair<std::string, std::string>>> read_user_environment(const FanoutFlags& flags,
                                                                               const Environment& env) {
  using R = Result<std::vector<std::pair<std::string, std::string>>>;
  std::string text;
  if (!flags.env_file.empty()) {
    std::ifstream in(flags.env_file, std::ios::binary);
    if (!in) return R::failure(fmt::format("--env-file {}: cannot read it ({})", flags.env_file, std::strerror(errno)));
    text.resize(kMaxEnvFileBytes + 1);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxEnvFileBytes)
      return R::failure(fmt::format("--env-file {}: larger than 1 MiB; is it the right file?", flags.env_file));
  }
  return user_environment(flags.exported, text, flags.env_file, env);
}
}  // namespace

int run_fanout(const CommandLine& cl, const Environment& env) {
  // Hosts, and the config of this command line.
  if (cl.subcommand == Subcommand::Status || cl.subcommand == Subcommand::Stacks)
    return fail({"ddplaunch status/stacks asks a running job's master: give --rdzv-endpoint HOST:PORT, not --hosts"});
  cluster::HostSelection selection = read_hosts(cl.fanout);
  if (!selection.ok()) return fail({selection.error});
  const auto& hosts = selection.hosts;
  JobSetup setup = local_setup(cl, env, static_cast<int>(hosts.size()));
  for (const auto& note : setup.notes) spdlog::info("{}", note);
  if (!setup.errors.empty()) return fail(setup.errors);
  const LaunchConfig& config = setup.config;
  SshCommand ssh = ssh_command(env, config.connect_timeout_s);
  if (!ssh.error.empty()) return fail({ssh.error});
  auto user_env = read_user_environment(cl.fanout, env);
  if (!user_env) return fail({user_env.error});
  Environment ssh_env = env;
  for (const char* secret : kSecretVariables) ssh_env.erase(secret);
  const std::vector<std::string> ssh_env_strings = to_env_strings(ssh_env);

  // Check every host before anything starts.
  CheckRequest request;
  request.cwd = std::filesystem::current_path().string();
  request.launcher = this_executable();
  request.needed = needed_programs(cl.program, config.program);
  const std::string local_version = fmt::format("ddplaunch {}", DDPLAUNCH_VERSION);
  spdlog::info("checking {} host(s) over ssh: reachable, ddplaunch {} there, the program there", hosts.size(),
               DDPLAUNCH_VERSION);
  boost::asio::io_context io;
  std::vector<CheckRun> runs = run_checks(io, ssh, hosts, check_command(request), ssh_env_strings);
  std::vector<HostReport> reports;
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    reports.push_back(parse_check_output(runs[i].output, request));
    std::string problem = check_problem(runs[i], reports.back(), request, local_version);
    if (!problem.empty()) problems.push_back(fmt::format("  {} (node {}): {}", hosts[i].name, i, problem));
  }
  if (!problems.empty()) {
    spdlog::error("{} of {} host(s) cannot run their node; nothing was started:", problems.size(), hosts.size());
    return fail(problems);
  }

  // The master, the token, and one ddplaunch per host.
  const std::string master = choose_master(config, hosts[0].name, reports[0]);
  const std::string token = config.token.empty() ? rendezvous::random_nonce() : config.token;
  if (token.empty()) return fail({"cannot draw a random token (getrandom failed)"});
  const bool collapse = config.collapse_output == CollapseOutput::On ||
                        (config.collapse_output == CollapseOutput::Auto && ::isatty(STDOUT_FILENO) == 1);
  std::vector<FanoutNode> nodes;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    NodeLaunch launch;
    launch.node_rank = static_cast<int>(i);
    launch.node_count = static_cast<int>(hosts.size());
    launch.master = master;
    launch.launcher = reports[i].launcher;
    launch.subcommand = cl.subcommand == Subcommand::Doctor ? "doctor" : "";
    launch.cwd = request.cwd;
    launch.host = hosts[i];
    launch.env = with_user_environment(forwarded_environment(env), *user_env);
    launch.options = forwarded_options(cl.options, hosts[i].slots > 0 || !hosts[i].devices.empty());
    // Collapsing is decided here and happens here, across the nodes: each node prints every
    // line of its ranks (whatever its own output is).
    launch.options.insert(launch.options.end(), {"--collapse-output", "off"});
    launch.program = cl.program;
    std::string block = environment_block(node_variables(launch));
    if (block.size() > kMaxEnvironmentBlockBytes)
      return fail({fmt::format("the variables for the hosts (-x, --env-file and the forwarded NCCL_*, PYTHON*, ... "
                               "of this shell) come to {} bytes; at most {} travel to the hosts: pass fewer",
                               block.size(), kMaxEnvironmentBlockBytes)});
    nodes.push_back({launch.node_rank, hosts[i].name, ssh_argv(ssh, hosts[i].name, launch_command(launch)),
                     std::move(block)});
  }
  FanoutJob job(io, std::move(nodes), token, config.grace_s, collapse);
  if (std::string error = job.start(ssh_env_strings); !error.empty()) spdlog::error("{}", error);
  io.run();
  return job.exit_code();
}

}  // namespace ddplaunch::fanout
