// The flag table, and lookups over it (spellings, "did you mean"). A flag that only stores
// its value names a config key; the others name an apply function of flag_values.cpp.
#include "config/flag_table.h"

#include "config/flag_values.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "config/command_line.h"

namespace ddplaunch {

namespace {

using G = FlagGroup;
using K = ValueKind;

// Order: groups as --help shows them. `pet` is torchrun's PET_<DEST> for its own flags.
constexpr FlagSpec kFlags[] = {
    {"-h,--help", G::Config, K::Switch, "", "", apply_help, "", "print this help"},
    {"--version", G::Config, K::Switch, "", "", apply_version, "", "print the version"},
    {"--config", G::Config, K::Text, "FILE", "", apply_config, "", "YAML config (keys: configs/default.yaml); flags override it"},
    {"--set", G::Config, K::Custom, "KEY=VALUE", "", apply_set, "", "set any config key, e.g. --set timeout.base_s=60 (repeatable)"},
    {"--dry-run", G::Config, K::Switch, "", "", apply_dry_run, "", "print the resolved config and every worker's environment"},

    {"--nnodes,--nodes", G::JobShape, K::Custom, "N", "", apply_nnodes, "PET_NNODES",
     "number of nodes, one ddplaunch on each; MIN:MAX = elastic (shrinks on loss, grows on join)"},
    {"--spares", G::JobShape, K::Count, "K", "membership.spares", nullptr, "",
     "keep up to K extra launchers idle as hot spares; one takes a lost node's place (same ranks)"},
    {"--last-call", G::JobShape, K::Seconds, "SECONDS", "membership.last_call_s", nullptr, "",
     "elastic: after MIN nodes joined, wait this long for more before starting (default 30)"},
    {"--nproc-per-node", G::JobShape, K::Custom, "N|auto|gpu|cpu", "", apply_nproc, "PET_NPROC_PER_NODE",
     "workers on this node: N; auto = GPUs, else CPUs; gpu = GPUs; cpu = CPUs (default: GPUs, else 1)"},
    {"--node-rank", G::JobShape, K::Count, "N", "node_rank", nullptr, "PET_NODE_RANK",
     "this node's rank (default: assigned by node 0 in join order; >= --nodes: a spare)"},
    {"--role", G::JobShape, K::Text, "NAME", "role", nullptr, "PET_ROLE", "ROLE_NAME given to the workers"},
    {"--slurm", G::JobShape, K::Switch, "", "slurm", nullptr, "", "take nodes, node rank and master from the Slurm step"},

    {"--rdzv-endpoint,--master", G::Rendezvous, K::Custom, "HOST[:PORT]", "", apply_endpoint, "PET_RDZV_ENDPOINT",
     "node 0's ddplaunch rendezvous (port default 29400); every node passes the same"},
    {"--master-addr", G::Rendezvous, K::Text, "HOST", "", apply_master_addr, "PET_MASTER_ADDR",
     "torchrun static rendezvous: the endpoint is MASTER-ADDR:MASTER-PORT (default 127.0.0.1)"},
    {"--master-port", G::Rendezvous, K::Custom, "PORT", "", apply_master_port, "PET_MASTER_PORT",
     "the rendezvous port (default 29500); workers' MASTER_PORT is another, free port"},
    {"--rdzv-backend", G::Rendezvous, K::Text, "c10d|static", "", apply_rdzv_backend, "PET_RDZV_BACKEND",
     "accepted: both mean node 0's ddplaunch hosts the rendezvous; etcd is refused"},
    {"--rdzv-id,--job-id", G::Rendezvous, K::Text, "ID", "job_id", nullptr, "PET_RDZV_ID",
     "job id, the same on every node (default: derived from the endpoint)"},
    {"--rdzv-conf", G::Rendezvous, K::Custom, "K=V,...", "", apply_rdzv_conf, "PET_RDZV_CONF",
     "join_timeout/timeout -> --join-timeout, read_timeout -> --connect-timeout, keep_alive_* -> heartbeats"},
    {"--standalone", G::Rendezvous, K::Switch, "", "standalone", nullptr, "PET_STANDALONE",
     "one node; rendezvous on 127.0.0.1 with free ports"},
    {"--token", G::Rendezvous, K::Text, "SECRET", "token", nullptr, "",
     "shared secret for joins (or DDPLAUNCH_TOKEN); proven, never sent; hidden from ps"},
    {"--token-file", G::Rendezvous, K::Text, "PATH", "token_file", nullptr, "",
     "read the shared secret from PATH (yours, mode 0600; trailing newline dropped)"},
    {"--rdzv-bind", G::Rendezvous, K::Text, "ADDR", "rendezvous_bind", nullptr, "",
     "where node 0 listens (default: its --master address(es); 0.0.0.0 or :: = all)"},
    {"--worker-port", G::Rendezvous, K::Text, "PORT|auto", "worker_port", nullptr, "",
     "MASTER_PORT of rank 0's c10d store (default auto: a free port each generation)"},
    {"--local-addr", G::Rendezvous, K::Text, "ADDR", "", apply_local_addr, "PET_LOCAL_ADDR",
     "accepted, not needed: node 0 sees the address each node connects from"},
    {"--join-timeout", G::Rendezvous, K::Seconds, "SECONDS", "join_timeout_s", nullptr, "",
     "wait this long for every node to join"},
    {"--connect-timeout", G::Rendezvous, K::Seconds, "SECONDS", "connect_timeout_s", nullptr, "",
     "per TCP connect attempt to node 0"},
    {"--heartbeat-interval", G::Rendezvous, K::Seconds, "SECONDS", "heartbeat_interval_s", nullptr, "",
     "seconds between heartbeats"},
    {"--heartbeat-timeout", G::Rendezvous, K::Seconds, "SECONDS", "heartbeat_timeout_s", nullptr, "",
     "silence after which a node is declared lost"},

    {"-m,--module", G::Program, K::Switch, "", "", apply_module, "PET_MODULE", "run PROGRAM as `python -m PROGRAM`"},
    {"--no-python", G::Program, K::Switch, "", "", apply_no_python, "PET_NO_PYTHON",
     "run PROGRAM as is, never through python"},
    {"--run-path", G::Program, K::Switch, "", "", apply_run_path, "PET_RUN_PATH",
     "run the script with python (torchrun's runpy in the agent); wins over --no-python"},
    {"--python", G::Program, K::Text, "PATH", "", apply_python, "",
     "interpreter for scripts (default: $PYTHON_EXEC, else /usr/bin/python3, else python3)"},
    {"--start-method", G::Program, K::Text, "spawn|fork|forkserver", "", apply_start_method, "PET_START_METHOD",
     "accepted: every method means one process per rank here"},
    {"--shim", G::Program, K::Text, "auto|preload|python|none", "shim", nullptr, "",
     "init reporting: NCCL LD_PRELOAD, Python helper, or none"},
    {"--pause-ranks", G::Program, K::Text, "R,R", "pause_ranks", nullptr, "", "start these ranks stopped, for gdb -p"},
    {"--init-grace", G::Program, K::Seconds, "SECONDS", "init_grace_s", nullptr, "",
     "programs without shim count as initialised after this long (0: first output)"},

    {"--max-restarts", G::Restarts, K::Count, "N", "restart.max_restarts", nullptr, "PET_MAX_RESTARTS",
     "torchrun's budget: group restarts after ANY failure (default 0)"},
    {"--init-restarts", G::Restarts, K::Count, "N", "restart.init_restarts", nullptr, "",
     "automatic group restarts after init failures, spent before --max-restarts (default 3)"},
    {"--restart-on", G::Restarts, K::Text, "init,runtime", "restart.restart_on", nullptr, "",
     "failures that restart the group (default init,runtime)"},
    {"--backoff", G::Restarts, K::Seconds, "SECONDS", "restart.backoff_s", nullptr, "",
     "wait before the first restart (doubles each time)"},
    {"--monitor-interval", G::Restarts, K::Custom, "SECONDS", "", apply_monitor_interval, "PET_MONITOR_INTERVAL",
     "accepted, not needed: ddplaunch reacts to worker events at once"},

    {"--hang-action", G::Restarts, K::Text, "report|restart|stop|auto", "hang.action", nullptr, "",
     "at the hang deadline (default auto: restart when restarts were asked, else stop)"},
    {"--hang-suspect-floor", G::Restarts, K::Seconds, "SECONDS", "hang.suspect_floor_s", nullptr, "",
     "a rank without progress is suspect (stacks shown, nothing stopped) no sooner than this (default 60)"},
    {"--hang-minimum", G::Restarts, K::Seconds, "SECONDS", "hang.hang_minimum_s", nullptr, "",
     "the hang deadline is never shorter than this (default 1800; learnt: 20 x the largest step)"},
    {"--history-file", G::Restarts, K::Text, "PATH|off", "hang.history_file", nullptr, "",
     "where past runs' init and step times are kept (default ~/.local/state/ddplaunch/history)"},

    {"--shutdown-timeout,--grace", G::Stopping, K::Seconds, "SECONDS", "grace_s", nullptr, "PET_SHUTDOWN_TIMEOUT",
     "SIGTERM -> SIGKILL grace when stopping workers"},
    {"--signals-to-handle", G::Stopping, K::Text, "SIG,...", "", apply_signals, "PET_SIGNALS_TO_HANDLE",
     "SIGTERM, SIGINT, SIGHUP (and SIGQUIT) stop the workers; SIGUSR1/SIGUSR2 are always forwarded to them; others are refused"},

    {"--log-dir", G::Output, K::Text, "DIR", "log_dir", nullptr, "PET_LOG_DIR",
     "write DIR/rank_<R>.log per rank (the current generation; earlier ones kept as rank_<R>.gen<G>.log)"},
    {"-r,--redirects", G::Output, K::Custom, "0-3|R:S,...", "", apply_redirects, "PET_REDIRECTS",
     "streams sent only to the log file (1 stdout, 2 stderr, 3 both; or LOCAL_RANK:S,...)"},
    {"-t,--tee", G::Output, K::Custom, "0-3|R:S,...", "", apply_tee, "PET_TEE",
     "streams sent to the log file and the terminal (as -r); with -r/-t, unlisted streams skip the file"},
    {"--local-ranks-filter", G::Output, K::Custom, "R,R", "", apply_local_ranks_filter, "PET_LOCAL_RANKS_FILTER",
     "show only these local ranks' output on the terminal (log files are unaffected)"},

    {"--hosts", G::FanOut, K::Text, "HOST,HOST|LIST", "", apply_hosts, "",
     "start one ddplaunch per host over ssh (first host = master), e.g. --hosts gpu[01-04]"},
    {"--hostfile", G::FanOut, K::Text, "FILE", "", apply_hostfile, "",
     "as --hosts, from a DeepSpeed hostfile: one `HOST slots=N` per line (N = that host's --nproc-per-node)"},
    {"--include", G::FanOut, K::Text, "HOST[:SLOT,..]@..", "", apply_include, "",
     "keep only these hosts (or slots = GPU indices) of --hosts/--hostfile"},
    {"--exclude", G::FanOut, K::Text, "HOST[:SLOT,..]@..", "", apply_exclude, "",
     "leave out these hosts (or slots) of --hosts/--hostfile"},
    {"--token-stdin", G::FanOut, K::Switch, "", "", apply_token_stdin, "",
     "read the rendezvous token from stdin's first line (how the fan-out hands it over)"},
    {"--stop-on-stdin-eof", G::FanOut, K::Switch, "", "", apply_stop_on_stdin_eof, "",
     "stop as on SIGTERM when stdin ends (the fan-out's ssh connection); a line SIGINT etc. acts as that signal"},

    {"--version-mismatch", G::Checks, K::Text, "warn|refuse", "version_mismatch", nullptr, "",
     "nodes with differing launcher/program/NCCL versions"},
    {"--no-peer-probe", G::Checks, K::Switch, "", "", apply_no_peer_probe, "",
     "skip the peer probe (every node connecting to its neighbours over each interface before workers start)"},

    {"--numa-binding", G::Placement, K::Text, "node|socket|exclusive|core-complex", "", apply_numa_binding,
     "PET_NUMA_BINDING",
     "bind each worker's CPUs (and prefer its memory) to its GPU's NUMA node; without GPUs: an even slice of cores"},
    {"--virtual-local-rank", G::Placement, K::Switch, "", "", apply_virtual_local_rank, "PET_VIRTUAL_LOCAL_RANK",
     "every worker gets LOCAL_RANK=0 and CUDA_VISIBLE_DEVICES = its one GPU"},
};

std::string normalized(std::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::span<const FlagSpec> flag_table() { return kFlags; }


std::vector<std::string> spellings(const FlagSpec& flag) {
  std::vector<std::string> out;
  std::string names(flag.names);
  for (std::size_t start = 0; start < names.size();) {
    auto end = names.find(',', start);
    if (end == std::string::npos) end = names.size();
    out.push_back(names.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string primary_name(const FlagSpec& flag) {
  for (const auto& s : spellings(flag))
    if (s.rfind("--", 0) == 0) return s.substr(2);
  return spellings(flag).front().substr(1);
}

const FlagSpec* find_flag(std::string_view name) {
  const std::string wanted = normalized(name);
  for (const FlagSpec& flag : kFlags)
    for (const auto& s : spellings(flag))
      if (s.substr(s.find_first_not_of('-')) == wanted) return &flag;
  return nullptr;
}

std::vector<const FlagSpec*> flags_with_prefix(std::string_view prefix) {
  const std::string wanted = normalized(prefix);
  std::vector<const FlagSpec*> out;
  if (wanted.empty()) return out;
  for (const FlagSpec& flag : kFlags)
    for (const auto& s : spellings(flag))
      if (s.rfind("--", 0) == 0 && s.compare(2, wanted.size(), wanted) == 0) {
        out.push_back(&flag);  // once per flag, whichever of its spellings matched
        break;
      }
  return out;
}

std::string suggest_flag(std::string_view typed) {
  const std::string wanted = normalized(typed.substr(std::min(typed.find_first_not_of('-'), typed.size())));
  std::string best;
  std::size_t best_distance = 0;
  for (const FlagSpec& flag : kFlags)
    for (const auto& s : spellings(flag)) {
      if (s.rfind("--", 0) != 0) continue;
      std::string name = s.substr(2);
      std::size_t d = edit_distance(wanted, name);
      // A prefix of a long name (--nproc) is as good as a typo of it.
      if (name.rfind(wanted, 0) == 0 && wanted.size() >= 3) d = std::min<std::size_t>(d, 1);
      if (best.empty() || d < best_distance) best = s, best_distance = d;
    }
  const std::size_t allowed = std::max<std::size_t>(2, wanted.size() / 3);
  return best_distance <= allowed ? best : "";
}

std::string_view group_title(FlagGroup group) {
  switch (group) {
    case G::Config: return "General";
    case G::JobShape: return "Job shape";
    case G::Rendezvous: return "Rendezvous (torchrun's static and c10d both map here)";
    case G::Program: return "Program (PROGRAM after the options or after --)";
    case G::Restarts: return "Restarts";
    case G::Stopping: return "Stopping";
    case G::Output: return "Output";
    case G::Checks: return "Checks";
    case G::Placement: return "Placement";
    case G::NotBuilt: return "Accepted, then refused (not built yet)";
    case G::FanOut: return "Fan-out (one ddplaunch per host over ssh; ssh command: $DDPLAUNCH_SSH, default ssh)";
  }
  return "";
}

}  // namespace ddplaunch
