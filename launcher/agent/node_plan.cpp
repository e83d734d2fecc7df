// NodePlan: see node_plan.h. The steps in the order main ran them when they were inline:
// the master's address, the GPUs and the workers, the console, then what a run needs.
#include "agent/node_plan.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "seat/etcd_seat.h"
#include "agent/job_authentication.h"
#include "agent/rendezvous_bind.h"
#include "config/token_source.h"
#include "ddplaunch/contract.h"
#include "ddplaunch/preflight/interfaces.h"
#include "ddplaunch/preflight/resolve.h"
#include "env/program_path.h"
#include "node_facts.h"
#include "output/stream_routing.h"
#include "output/worker_output.h"
#include "placement/node_placement.h"

namespace ddplaunch {

namespace {

// Data piped or redirected into ddplaunch (`cat data | ddplaunch ...`, `< file`) is the
// workers' stdin, as under torchrun; a terminal, /dev/null or nothing is not data.
bool stdin_carries_data() {
  struct stat info {};
  return ::fstat(STDIN_FILENO, &info) == 0 && (S_ISFIFO(info.st_mode) || S_ISREG(info.st_mode));
}

// /dev/null or closed: a read of the launcher's stdin would end at once (a batch job's).
bool stdin_at_end_of_file() {
  struct stat info {}, null_device {};
  if (::fstat(STDIN_FILENO, &info) != 0) return errno == EBADF;
  return S_ISCHR(info.st_mode) && ::stat("/dev/null", &null_device) == 0 && info.st_rdev == null_device.st_rdev;
}

// Only what this job needs: a number of workers on one node needs no GPU count, a machine
// without an NVIDIA device has none to find, NCCL's version matters only across nodes.
preflight::GpuQuery gpu_query(const LaunchConfig& config, bool doctor, bool driver_present) {
  preflight::GpuNeeds needs;
  needs.driver_present = driver_present;
  needs.nproc_is_number = config.nproc_per_node.count.has_value();
  needs.single_node = config.standalone || (config.nodes == 1 && config.membership.spares == 0);
  needs.placement = config.numa_binding != placement::BindingMode::None;
  needs.report = doctor || config.dry_run;
  preflight::GpuQuery query;
  query.devices = preflight::gpu_probe_needed(needs);
  query.why_not_probed = !needs.driver_present ? "no /dev/nvidia* and no nvidia module: nothing to find"
                                               : "--nproc-per-node is a number on a single-node job";
  query.pci_addresses = needs.placement;
  query.nccl = !preflight::nccl_version_needed(needs) ? preflight::NcclLookup::Skip
                                                      : preflight::NcclLookup::FilesThenLoad;
  return query;
}

// Where the rendezvous is: this machine (--standalone), this launcher's address on its route
// to etcd (the coordinator is elected among the launchers), or --master resolved.
std::string locate_master(const LaunchConfig& config, NodePlan& plan) {
  if (config.standalone) {
    plan.master_host = plan.master_ip = "127.0.0.1";
  } else if (etcd_enabled(config)) {
    // The coordinator is elected among the launchers: this one's address is the one its
    // route to etcd leaves from (where it hosts the rendezvous if elected).
    auto address = etcd_route_address(config.etcd.endpoints);
    if (!address) return address.error;
    plan.master_host = plan.master_ip = *address;
    plan.master_addresses = {*address};
    plan.rendezvous_bind = {*address};
    plan.rendezvous_port = config.etcd.coordinator_port;
  } else {
    auto endpoint = parse_host_port(config.master);
    plan.master_host = endpoint->host;
    plan.rendezvous_port = endpoint->port;
    auto resolved = preflight::resolve_host(endpoint->host);
    if (!resolved) return resolved.error;
    plan.master_ip = resolved->front();
    plan.master_addresses = *resolved;
    auto loopback = preflight::check_master_not_loopback(endpoint->host, *resolved, config.nodes);
    // Loopback is right when every "node" runs on this machine (tests, one-box debugging);
    // the master refuses the job if a node joins from elsewhere.
    if (!loopback)
      spdlog::info("master {} is loopback: every node must run on this machine (otherwise pass node 0's "
                   "routable address to --master)", plan.master_ip);
  }
  return "";
}

// The workers of this node: how many (GPUs found, or asked), their environment, each one's
// CPUs and memory (--numa-binding), and the facts this node joins with.
std::string plan_workers(const LaunchConfig& config, const Environment& env, const preflight::GpuInfo& gpus,
                         bool driver_present, NodePlan& plan) {
  // Not probed on a node with a driver (a single-node job with a numeric --nproc-per-node):
  // GPUs may be there, so NCCL may run.
  plan.nccl_may_run = gpus.count > 0 || (driver_present && gpus.source == preflight::GpuSource::NotProbed);
  auto nproc = preflight::resolve_nproc(config.nproc_per_node, gpus.count);
  if (!nproc) return nproc.error;
  plan.nproc = *nproc;
  plan.gpu_count = gpus.count;
  plan.base_env = env;
  for (const char* secret : kSecretVariables) plan.base_env.erase(secret);  // the launcher's, not the workers'
  for (const auto& note : add_shim_environment(config.shim, config.program, plan.base_env)) spdlog::warn("{}", note);
  if (config.debug) plan.base_env[contract::kDebugTimeoutSeconds] = "86400";
  if (config.post_mortem) plan.base_env[contract::kPostMortemSeconds] = fmt::format("{:g}", config.post_mortem_timeout_s);
  // Placement: each worker's CPUs and memory nodes (--numa-binding), decided once here.
  auto placement = placement::plan_node_placement(config.numa_binding, plan.nproc, gpus.count, gpus.pci_bus_ids);
  if (!placement) return placement.error;
  plan.placement = *placement;
  if (config.virtual_local_rank)
    if (std::string problem = virtual_local_rank_problem(env, plan.nproc); !problem.empty()) return problem;
  plan.facts = gather_node_facts(config, plan.nproc, gpus);
  // The interface the peer probe verifies is the one this node's collectives read: NCCL's
  // where there are (or, not probed, may be) GPUs, gloo's where there are none (a gloo job
  // never reads NCCL_SOCKET_IFNAME; the node agent warns about a wrong one instead).
  const char* ifname_variable = plan.nccl_may_run ? "NCCL_SOCKET_IFNAME" : "GLOO_SOCKET_IFNAME";
  if (auto ifname = env.find(ifname_variable); ifname != env.end()) plan.facts.socket_ifname = ifname->second;
  return "";
}

// Interactive debugging: where the console is, and whether stdin is data for the workers.
void plan_console(const CommandLine& cl, const LaunchConfig& config, const Environment& env, NodePlan& plan) {
  plan.console_place = cl.stop_on_stdin_eof ? ConsolePlace::Fanout
                       : isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 ? ConsolePlace::Terminal
                                                                                 : ConsolePlace::None;
  // (srun hands every task a pipe of its own, data or not: under Slurm the workers keep their
  // debugger keyboards; `srun --input` users reach the console with `ddplaunch debug`.)
  plan.inherit_stdin = !cl.stop_on_stdin_eof && !cl.token_stdin && !config.slurm && stdin_carries_data();
  if (!cl.stop_on_stdin_eof && !config.slurm && stdin_at_end_of_file()) plan.base_env[contract::kStdinAtEof] = "1";
  plan.record_token = cl.token_stdin || (env.count("DDPLAUNCH_TOKEN_ORIGIN") && env.at("DDPLAUNCH_TOKEN_ORIGIN") == "ddplaunch-srun");
}

}  // namespace

Result<PlannedNode> plan_node(const LaunchConfig& config, const CommandLine& cl, const Environment& env) {
  PlannedNode planned;
  NodePlan& plan = planned.plan;
  plan.config = config;
  plan.doctor = cl.subcommand == Subcommand::Doctor;
  plan.hostname = local_hostname();
  if (std::string error = locate_master(config, plan); !error.empty()) return Result<PlannedNode>::failure(error);
  const bool driver_present = preflight::nvidia_driver_present();
  planned.gpus = preflight::detect_gpus(gpu_query(config, plan.doctor, driver_present));
  if (std::string error = plan_workers(config, env, planned.gpus, driver_present, plan); !error.empty())
    return Result<PlannedNode>::failure(error);
  plan_console(cl, config, env, plan);
  return Result<PlannedNode>::success(std::move(planned));
}

std::string ready_node_to_run(NodePlan& plan) {
  const LaunchConfig& config = plan.config;
  if (!plan.doctor)
    if (std::string problem = program_start_problem(config.program.front()); !problem.empty()) return problem;
  // torchrun's -r/-t without --log-dir: a fresh directory, as torchrun's temporary one.
  if (plan.config.log_dir.empty() && streams_need_files(config.redirects, config.tee)) {
    auto dir = make_log_directory();
    if (!dir) return dir.error;
    plan.config.log_dir = *dir;
    spdlog::info("-r/-t without --log-dir: the workers' log files go to {}", *dir);
  }
  plan.host_chosen_by_address =
      !config.standalone && !etcd_enabled(config) && config.node_rank < 0 && is_local_address(plan.master_ip);
  plan.host_server = !etcd_enabled(config) && (config.standalone || config.node_rank == 0 || plan.host_chosen_by_address);
  if (plan.host_server) {
    auto bind = choose_rendezvous_bind(config.rendezvous_bind, config.standalone, plan.master_host,
                                       plan.master_addresses);
    if (!bind.error.empty()) return bind.error;
    plan.rendezvous_bind = bind.addresses;
  }
  return authenticate_job(plan);
}

}  // namespace ddplaunch
