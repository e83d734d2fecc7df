// LaunchConfig: the one source of truth for a ddplaunch run. Filled from YAML, then the
// command line, then environment fallbacks (DDPLAUNCH_TOKEN, Slurm/Kubeflow hints), and
// validated once; `--dry-run` prints it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/base/name_table.h"
#include "ddplaunch/preflight/nproc_request.h"
#include "output/stream_routing.h"
#include "placement/cpu_placement.h"
#include "policy/hang_action.h"
#include "policy/straggler_action.h"
#include "policy/hang_tracker.h"
#include "policy/restart_settings.h"

namespace ddplaunch {

// Membership: hot spares and torchrun's elastic MIN:MAX. Off (a lost node ends the
// job) unless spares > 0 or min_nodes < nodes.
struct MembershipConfig {
  int min_nodes = 0;                 // 0: = nodes (fixed size); --nodes MIN:MAX sets it
  int spares = 0;                    // --spares K: idle launchers kept to replace a lost node
  double last_call_s = 30;           // elastic: after MIN joined, wait this long for more
  double below_min_wait_s = 300;     // too few nodes and no spare: wait for a launcher this long
  int exclude_after = 2;             // init failures first on a node's ranks before it is excluded
  double exclude_cooldown_s = 0;     // an excluded host may rejoin after this long (0: at once)
  int max_changes = 10;              // membership changes before the job gives up (flapping)
};

// How the launchers speak to etcd: plain http, or TLS (https).
enum class EtcdProtocol { Http, Https };
inline constexpr NameTable<EtcdProtocol, 2> kEtcdProtocolNames{{{
    {EtcdProtocol::Http, "http"},
    {EtcdProtocol::Https, "https"},
}}};

// The coordinator on etcd (--rdzv-backend etcd): launchers register in etcd, elect
// the coordinator among themselves, and a new one takes over when it is lost.
struct EtcdConfig {
  std::string endpoints;             // "" = off (node 0 hosts the rendezvous); HOST:PORT[,HOST:PORT...]
  double lease_ttl_s = 3;            // a lost coordinator's lease expires after this long
  int coordinator_port = 29400;      // where the elected launcher hosts the rendezvous (0: any free port)
  EtcdProtocol protocol = EtcdProtocol::Http;  // https: TLS (https:// endpoints imply it)
  std::string cacert, cert, key;     // TLS files (PEM): etcd's CA, a client certificate and its key
  std::string username;              // etcd authentication; "" = none
  std::string password_file;         // the password's file (first line); else DDPLAUNCH_ETCD_PASSWORD
  std::string password;              // no config key: job_setup reads it from the file or the environment
};

// MASTER_PORT of rank 0's c10d store: a free port the master picks for every generation
// (auto), or a fixed one.
struct WorkerPort {
  std::optional<int> fixed;  // nothing: auto
  bool automatic() const { return !fixed.has_value(); }
};

// Where past runs' init and step times are kept: the default file, another one, or none ("off").
struct HistoryFile {
  bool off = false;
  std::string path;  // "": RunHistory::default_path()
};

// Nodes whose launcher, program, NCCL or driver versions differ: the job starts with a
// warning, or is refused.
enum class VersionMismatch { Warn, Refuse };
inline constexpr NameTable<VersionMismatch, 2> kVersionMismatchNames{{{
    {VersionMismatch::Warn, "warn"},
    {VersionMismatch::Refuse, "refuse"},
}}};

// Which of ddplaunch's shims the workers get: auto (the Python shim always, the NCCL preload
// where NCCL is built in), one of them, or none.
enum class ShimChoice { Auto, Preload, Python, None };
inline constexpr NameTable<ShimChoice, 4> kShimChoiceNames{{{
    {ShimChoice::Auto, "auto"},
    {ShimChoice::Preload, "preload"},
    {ShimChoice::Python, "python"},
    {ShimChoice::None, "none"},
}}};

// Identical lines of several ranks printed once, naming the ranks: on a terminal (auto), always
// (on) or never (off).
enum class CollapseOutput { Auto, On, Off };
inline constexpr NameTable<CollapseOutput, 3> kCollapseOutputNames{{{
    {CollapseOutput::Auto, "auto"},
    {CollapseOutput::On, "on"},
    {CollapseOutput::Off, "off"},
}}};

struct LaunchConfig {
  // Job shape.
  int nodes = 1;
  preflight::NprocRequest nproc_per_node;  // N, or auto (GPUs, else CPUs), gpu, cpu, gpu-or-1 (GPUs, else 1)
  int node_rank = -1;                   // -1: assigned by the master in join order
  std::string master;                   // HOST:PORT of the rendezvous; empty with --standalone
  bool standalone = false;
  bool peer_probe = true;               // multi-node: nodes probe their peers before workers start
  std::string job_id;                   // default: derived from the master endpoint
  std::string token;                    // shared secret; joins prove it (HMAC), never sent
  std::string token_file;               // read into token at start (owner-only file)
  std::string rendezvous_bind;          // "" = master's own address(es); 0.0.0.0 / :: = all
  WorkerPort worker_port;               // MASTER_PORT for workers: auto or 1..65535
  std::string role = "default";
  bool slurm = false;                   // take the job shape from the Slurm step

  // Timing (seconds).
  double join_timeout_s = 300;
  double connect_timeout_s = 5;
  double heartbeat_interval_s = 1;
  double heartbeat_timeout_s = 10;
  double grace_s = 5;                   // SIGTERM → SIGKILL
  double init_grace_s = 0;              // programs without any shim report count as running after this long (0: never)
  double setup_timeout_s = 0;           // bound on a rank's setup (spawn → init); 0: unbounded
  InitDeadlineFormula init_deadline;  // the init deadline's formula (the timeout.* keys)
  RestartSettings restart;
  MembershipConfig membership;
  EtcdConfig etcd;
  // Runtime hangs: the learnt deadlines' knobs, what the hang deadline does, and
  // where past runs are remembered.
  HangSettings hang;
  HangActionSetting hang_action = HangActionSetting::Auto;  // auto: restart when restarts were asked, else stop
  HistoryFile history_file;           // where past runs' init and step times are kept, or off
  // A persistent straggler: reported only, or its node swapped for a spare after this long.
  StragglerAction straggler_action = StragglerAction::Report;
  double straggler_swap_after_s = 300;

  // Workers.
  ShimChoice shim = ShimChoice::Auto;
  std::string log_dir;                  // per-rank log files (append, generation headers)
  std::string trace_file;               // the job's timeline: Chrome trace JSON here, the HTML page beside it
  std::string report_file;              // the job's time account and stragglers as JSON, at its end
  std::vector<int> local_ranks_filter;  // only these local ranks' output on the terminal (empty: all)
  std::vector<int> ranks_filter;        // only these global ranks' output on the terminal (empty: all)
  // Off by default: every rank's line as torchrun prints it (scripts and checks count them).
  CollapseOutput collapse_output = CollapseOutput::Auto;
  std::vector<int> pause_ranks;         // start these ranks stopped for a debugger
  bool debug = false;                   // process groups without the program's timeout wait a day (Python shim)
  double unattended_stop_s = 1800;      // no terminal, nobody attached: a stopped rank is continued after this long
  bool post_mortem = false;             // an uncaught exception stops the rank in pdb (Python shim)
  double post_mortem_timeout_s = 1800;  // then it exits with its exception after this long
  VersionMismatch version_mismatch = VersionMismatch::Warn;  // differing launcher/program/NCCL versions
  placement::BindingMode numa_binding = placement::BindingMode::None;  // torchrun's --numa-binding
  bool virtual_local_rank = false;      // LOCAL_RANK=0, CUDA_VISIBLE_DEVICES = the worker's one GPU
  StreamSpec redirects;                 // torchrun's -r: 0..3 or LOCAL_RANK:0..3,...: to the log file only
  StreamSpec tee;                       // torchrun's -t: to the log file and the terminal

  // Run mode.
  bool dry_run = false;
  std::vector<std::string> program;     // PROGRAM [ARGS...]
};

// Checks every value once; returns one user-facing message per problem (empty = valid).
std::vector<std::string> validate(const LaunchConfig& config);

// Whether this job keeps spares or is elastic (the launcher then assigns node slots itself).
bool membership_enabled(const LaunchConfig& config);
int min_nodes(const LaunchConfig& config);
// --rdzv-backend etcd: the coordinator is elected among the launchers (membership always on).
inline bool etcd_enabled(const LaunchConfig& config) { return !config.etcd.endpoints.empty(); }  // membership.min_nodes, or nodes when unset

// The resolved config as YAML, every key of the option table (the token hidden), then the
// program (for --dry-run; written by default_config.cpp, beside configs/default.yaml's writer).
std::string describe(const LaunchConfig& config);

// Splits "host:port" / "[v6]:port"; nullopt when malformed.
struct HostPort {
  std::string host;
  int port = 0;
};
std::optional<HostPort> parse_host_port(const std::string& text);
// 1..65535 written as decimal digits only.
std::optional<int> parse_port_text(std::string_view text);

}  // namespace ddplaunch
