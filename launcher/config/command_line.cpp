// Flag table → settings. `--flag value` and `--flag=value` both work; the program starts
// after `--` or at the first argument that is not an option (torchrun style).
#include "config/command_line.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace ddplaunch {

namespace {

struct Flag {
  std::string_view name;        // without leading dashes
  std::string_view setting;     // config key it sets
  bool takes_value;             // false: sets the key to "true"
  std::string_view help;
};

constexpr Flag kFlags[] = {
    {"nodes", "nodes", true, "number of nodes (one ddplaunch per node)"},
    {"nnodes", "nodes", true, "alias of --nodes (torchrun spelling)"},
    {"nproc-per-node", "nproc_per_node", true, "workers on this node: N or auto (GPU count, else 1)"},
    {"nproc_per_node", "nproc_per_node", true, "alias of --nproc-per-node"},
    {"node-rank", "node_rank", true, "this node's rank (default: assigned by the master in join order)"},
    {"node_rank", "node_rank", true, "alias of --node-rank"},
    {"master", "master", true, "HOST:PORT of the rendezvous on node 0"},
    {"rdzv-endpoint", "master", true, "alias of --master (torchrun spelling)"},
    {"rdzv_endpoint", "master", true, "alias of --master"},
    {"standalone", "standalone", false, "single node; rendezvous on 127.0.0.1, free ports"},
    {"job-id", "job_id", true, "job identifier; must match on every node (default: from --master)"},
    {"token", "token", true, "shared secret for joins (or DDPLAUNCH_TOKEN); never sent in clear"},
    {"worker-port", "worker_port", true, "MASTER_PORT for the workers' c10d store: auto or a port"},
    {"role", "role", true, "ROLE_NAME for the workers"},
    {"slurm", "slurm", false, "take nodes, node rank and master from the Slurm step"},
    {"join-timeout", "join_timeout_s", true, "seconds to wait for every node to join"},
    {"connect-timeout", "connect_timeout_s", true, "seconds per TCP connect attempt to the master"},
    {"heartbeat-interval", "heartbeat_interval_s", true, "seconds between heartbeats"},
    {"heartbeat-timeout", "heartbeat_timeout_s", true, "seconds of silence before a node is declared lost"},
    {"grace", "grace_s", true, "seconds between SIGTERM and SIGKILL when stopping workers"},
    {"init-grace", "init_grace_s", true, "programs without shim count as initialised after this long (0: first output)"},
    {"max-restarts", "restart.max_restarts", true, "group restarts allowed after failures"},
    {"max_restarts", "restart.max_restarts", true, "alias of --max-restarts"},
    {"restart-on", "restart.restart_on", true, "failures that restart the group: init or init,runtime"},
    {"backoff", "restart.backoff_s", true, "seconds before the first restart (doubles each time)"},
    {"shim", "shim", true, "init reporting: auto, preload (NCCL LD_PRELOAD), python, none"},
    {"log-dir", "log_dir", true, "directory for per-rank log files (appended across restarts)"},
    {"pause-ranks", "pause_ranks", true, "comma list of ranks to start stopped, for gdb -p"},
    {"version-mismatch", "version_mismatch", true, "warn or refuse when nodes differ in versions"},
};

const Flag* find_flag(std::string_view name) {
  auto it = std::find_if(std::begin(kFlags), std::end(kFlags), [&](const Flag& f) { return f.name == name; });
  return it == std::end(kFlags) ? nullptr : &*it;
}

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args) {
  CommandLine cl;
  std::size_t i = 0;
  if (!args.empty() && args[0] == "doctor") cl.subcommand = Subcommand::Doctor, i = 1;
  else if (!args.empty() && args[0] == "status") cl.subcommand = Subcommand::Status, i = 1;

  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      cl.program.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {  // first positional: the program starts here
      cl.program.assign(args.begin() + static_cast<long>(i), args.end());
      break;
    }
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name.resize(eq);
    }
    auto take_value = [&]() -> std::optional<std::string> {
      if (inline_value) return inline_value;
      if (i + 1 < args.size()) return args[++i];
      cl.errors.push_back(fmt::format("--{} needs a value (see ddplaunch --help)", name));
      return std::nullopt;
    };
    if (name == "h" || name == "help") { cl.help = true; continue; }
    if (name == "version") { cl.version = true; continue; }
    if (name == "dry-run") { cl.dry_run = true; continue; }
    if (name == "config") {
      if (auto v = take_value()) cl.config_path = *v;
      continue;
    }
    if (name == "set") {  // --set timeout.base_s=60: any config key
      if (auto v = take_value()) {
        auto eq = v->find('=');
        if (eq == std::string::npos || eq == 0)
          cl.errors.push_back(fmt::format("--set expects KEY=VALUE (got '{}')", *v));
        else
          cl.settings.emplace_back(v->substr(0, eq), v->substr(eq + 1));
      }
      continue;
    }
    const Flag* flag = find_flag(name);
    if (!flag) {
      cl.errors.push_back(fmt::format("unknown option '{}' (see ddplaunch --help); put the program after '--' "
                                      "if this belongs to it", arg));
      continue;
    }
    if (!flag->takes_value) {
      if (inline_value && *inline_value != "true" && *inline_value != "false")
        cl.errors.push_back(fmt::format("--{} takes no value or true/false (got '{}')", name, *inline_value));
      cl.settings.emplace_back(std::string(flag->setting), inline_value.value_or("true"));
      continue;
    }
    if (auto v = take_value()) cl.settings.emplace_back(std::string(flag->setting), *v);
  }
  return cl;
}

std::string usage_text() {
  std::string s =
      "ddplaunch — per-node launcher for distributed PyTorch (torchrun replacement)\n\n"
      "usage:\n"
      "  ddplaunch [options] [--] PROGRAM [ARGS...]      run PROGRAM on this node's workers\n"
      "  ddplaunch doctor [options]                     rendezvous + every check, start no worker\n"
      "  ddplaunch status --master HOST:PORT            live table of a running job's nodes and ranks\n\n"
      "examples:\n"
      "  ddplaunch --standalone --nproc-per-node 2 -- /usr/bin/python3 train.py\n"
      "  ddplaunch --nodes 4 --nproc-per-node 8 --master node01:29400 -- ./train_binary --lr 3e-4\n"
      "  srun -N 4 --ntasks-per-node=1 ddplaunch --slurm -- python3 train.py\n\n"
      "options:\n"
      "  --config FILE                 YAML config (keys: configs/default.yaml); flags override it\n"
      "  --set KEY=VALUE               set any config key, e.g. --set timeout.base_s=60\n"
      "  --dry-run                     print the resolved config and every worker's environment\n";
  for (const Flag& f : kFlags) {
    std::string left = fmt::format("--{}{}", f.name, f.takes_value ? " VALUE" : "");
    s += fmt::format("  {:<29} {}\n", left, f.help);
  }
  s += "  --version                     print the version\n";
  return s;
}

}  // namespace ddplaunch
