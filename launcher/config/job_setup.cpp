// Layering of config sources, and the cluster (Slurm) integration.
#include "config/job_setup.h"

#include <algorithm>
#include <unistd.h>

#include <fmt/format.h>

#include "config/program_command.h"
#include "config/token_source.h"
#include "config/yaml_config.h"
#include "ddplaunch/cluster/cluster_hints.h"
#include "ddplaunch/cluster/host_address.h"

namespace ddplaunch {

namespace {

bool set_on_command_line(const CommandLine& cl, const std::string& key) {
  return std::any_of(cl.settings.begin(), cl.settings.end(), [&](const auto& s) { return s.first == key; });
}

// Applies one cluster value unless the command line set the key; a differing explicit
// value wins and is reported.
void apply_hint(const CommandLine& cl, const std::string& key, const std::string& value, const std::string& source,
                LaunchConfig& config, JobSetup& setup) {
  if (set_on_command_line(cl, key)) {
    auto explicit_value = std::find_if(cl.settings.begin(), cl.settings.end(), [&](const auto& s) { return s.first == key; });
    if (explicit_value->second != value)
      setup.notes.push_back(fmt::format("{} = {} from the command line overrides {}'s {}", key, explicit_value->second,
                                        source, value));
    return;
  }
  auto errors = apply_settings({{key, value}}, source, config);
  setup.errors.insert(setup.errors.end(), errors.begin(), errors.end());
}

void apply_cluster_hints(const CommandLine& cl, const Environment& env, LaunchConfig& config, JobSetup& setup) {
  const bool slurm_step = cluster::detect_slurm_step(env);
  cluster::ClusterHints hints;
  if (config.slurm || slurm_step) {
    if (!slurm_step) {
      setup.errors.push_back("--slurm was given but this is not inside a Slurm job step (SLURM_JOB_ID, SLURM_NODEID, "
                             "SLURM_STEP_ID unset): run it under srun, e.g. srun -N 2 --ntasks-per-node=1 ddplaunch --slurm -- prog");
      return;
    }
    if (!config.slurm) setup.notes.push_back("Slurm job step detected: taking nodes, node rank and master from it");
    hints = cluster::read_slurm_hints(env);
  } else {  // Kubeflow's PET_* variables are torchrun's flag fallbacks: parse_command_line read them
    return;
  }
  if (hints.error) {
    setup.errors.push_back(*hints.error);
    return;
  }
  for (const auto& note : hints.notes) setup.notes.push_back(note);
  const std::string& src = hints.source;
  if (hints.nodes) apply_hint(cl, "nodes", std::to_string(*hints.nodes), src, config, setup);
  if (hints.node_rank) apply_hint(cl, "node_rank", std::to_string(*hints.node_rank), src, config, setup);
  if (hints.nproc_per_node) apply_hint(cl, "nproc_per_node", std::to_string(*hints.nproc_per_node), src, config, setup);
  if (hints.job_id) apply_hint(cl, "job_id", *hints.job_id, src, config, setup);
  if (hints.worker_port) apply_hint(cl, "worker_port", std::to_string(*hints.worker_port), src, config, setup);
  if (hints.master_host && hints.rendezvous_port && !set_on_command_line(cl, "master")) {
    auto address = cluster::resolve_slurm_host(*hints.master_host);
    if (address.error) {
      setup.errors.push_back(*address.error);
      return;
    }
    std::string host = address.address.find(':') != std::string::npos ? "[" + address.address + "]" : address.address;
    apply_hint(cl, "master", fmt::format("{}:{}", host, *hints.rendezvous_port), src, config, setup);
    setup.notes.push_back(fmt::format("master: {} = {} ({}), rendezvous port {}", *hints.master_host, address.address,
                                      address.how, *hints.rendezvous_port));
  }
}

// The token: --token (or YAML token), else --token-file, else DDPLAUNCH_TOKEN.
void resolve_token(const Environment& env, LaunchConfig& config, JobSetup& setup) {
  if (!config.token_file.empty()) {
    if (!config.token.empty())
      return setup.errors.push_back("both a token and a token file are given (--token / token, --token-file / "
                                    "token_file): keep one");
    TokenFromFile read = read_token_file(config.token_file);
    if (!read.error.empty()) return setup.errors.push_back(read.error);
    config.token = std::move(read.token);
    return;
  }
  if (config.token.empty())
    if (auto it = env.find("DDPLAUNCH_TOKEN"); it != env.end()) config.token = it->second;
}

// etcd's password (with --rdzv-conf username=): password_file's first line, else
// DDPLAUNCH_ETCD_PASSWORD; never the command line, where ps shows it.
void resolve_etcd_password(const Environment& env, LaunchConfig& config, JobSetup& setup) {
  EtcdConfig& etcd = config.etcd;
  if (etcd.username.empty()) return;
  if (!etcd.password_file.empty()) {
    TokenFromFile read = read_secret_first_line(etcd.password_file, "--rdzv-conf password_file", "the etcd password");
    if (!read.error.empty()) return setup.errors.push_back(read.error);
    etcd.password = std::move(read.token);
    return;
  }
  if (auto it = env.find("DDPLAUNCH_ETCD_PASSWORD"); it != env.end() && !it->second.empty()) {
    etcd.password = it->second;
    return;
  }
  setup.errors.push_back(fmt::format("--rdzv-conf username={} needs the etcd password: give password_file=PATH (its "
                                     "first line; your own file, mode 0600) or set DDPLAUNCH_ETCD_PASSWORD",
                                     etcd.username));
}

}  // namespace

std::string default_job_id(const LaunchConfig& config) {
  // etcd: none. Every launcher of a run must give the same id, and no two runs one id (the
  // job's state in etcd would carry over), which no default can promise outside a scheduler.
  if (etcd_enabled(config)) return "";
  if (config.standalone || config.master.empty()) return fmt::format("standalone-{}", getpid());
  return "ddplaunch@" + config.master;
}

JobSetup resolve_job_setup(const CommandLine& cl, const Environment& env) {
  JobSetup setup;
  setup.notes = cl.notes;
  LaunchConfig& config = setup.config;
  if (!cl.config_path.empty()) {
    auto errors = apply_yaml_file(cl.config_path, config);
    setup.errors.insert(setup.errors.end(), errors.begin(), errors.end());
  }
  auto errors = apply_settings(cl.settings, "command line", config);
  setup.errors.insert(setup.errors.end(), errors.begin(), errors.end());
  config.program = program_command(cl.program_mode, cl.program, python_interpreter(cl.python, env));
  config.dry_run = cl.dry_run;
  resolve_token(env, config, setup);
  resolve_etcd_password(env, config, setup);
  if (std::string weak = token_weakness(config.token); !weak.empty()) setup.warnings.push_back(weak);
  if (!setup.errors.empty()) return setup;

  apply_cluster_hints(cl, env, config, setup);
  if (config.master.empty() && config.nodes == 1 && !etcd_enabled(config)) config.standalone = true;  // one node, nothing to meet
  if (config.job_id.empty()) config.job_id = default_job_id(config);
  if (cl.subcommand == Subcommand::Doctor && config.program.empty()) config.program = {"(doctor)"};
  if (cl.subcommand == Subcommand::Status && config.program.empty()) config.program = {"(status)"};
  if (cl.subcommand == Subcommand::Stacks && config.program.empty()) config.program = {"(stacks)"};
  if (cl.subcommand == Subcommand::Debug && config.program.empty()) config.program = {"(debug)"};
  if (cl.subcommand == Subcommand::Timeline && config.program.empty()) config.program = {"(timeline)"};
  if (cl.subcommand == Subcommand::Tail && config.program.empty()) config.program = {"(tail)"};
  auto problems = validate(config);
  setup.errors.insert(setup.errors.end(), problems.begin(), problems.end());
  return setup;
}

}  // namespace ddplaunch
