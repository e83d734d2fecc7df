// The option table's rows. Order: configs/default.yaml's (a nested section's keys together),
// each command-line-only flag beside the keys it is about; --help groups the flags by their
// group. A key's default is not written here: it is the LaunchConfig member's initialiser.
#include "config/option_table.h"

#include "config/choice_fields.h"
#include "config/flag_values.h"

namespace ddplaunch {

namespace {

using G = FlagGroup;
using K = ValueKind;
using L = LaunchConfig;

constexpr double kWeek = 7 * 24 * 3600;
constexpr double kDay = 24 * 3600;
constexpr double kHour = 3600;
constexpr std::string_view s = "seconds";

constexpr OptionSpec kOptions[] = {
    {.names = "-h,--help", .kind = K::Switch, .apply = apply_help, .help = "print this help"},
    {.names = "--version", .kind = K::Switch, .apply = apply_version, .help = "print the version"},
    {.names = "--config", .value_name = "FILE", .apply = apply_config,
     .help = "YAML config (keys: configs/default.yaml); flags override it"},
    {.names = "--set", .kind = K::Custom, .value_name = "KEY=VALUE", .apply = apply_set,
     .help = "set any config key, e.g. --set timeout.base_s=60 (repeatable)"},
    {.names = "--dry-run", .kind = K::Switch, .apply = apply_dry_run,
     .help = "print the resolved config and every worker's environment"},
    {.names = "--print-default-config", .kind = K::Switch, .apply = apply_print_default_config,
     .help = "print every config key with its default, range and flag (configs/default.yaml)"},
    {.names = "--man", .kind = K::Switch, .apply = apply_man, .help = "print the man page (roff): ddplaunch --man | man -l -"},

    {.heading = "--- job shape ---------------------------------------------------------------",
     .key = "nodes", .field = field<&L::nodes>(), .doc = "number of nodes; one ddplaunch runs on each",
     .range = {1, 65536}, .names = "--nnodes,--nodes", .group = G::JobShape, .kind = K::Custom,
     .value_name = "N|MIN:MAX", .pet = "PET_NNODES", .apply = apply_nnodes,
     .help = "number of nodes, one ddplaunch on each; MIN:MAX = elastic (shrinks on loss, grows on join)"},
    {.key = "nproc_per_node",
     .field = parsed_field<&L::nproc_per_node, preflight::parse_nproc_request, preflight::nproc_request_text,
                           preflight::nproc_request_choices>(),
     .doc = "workers per node: a number; gpu-or-1 = GPUs visible on the node, else 1;\n"
            "torchrun's words: auto = GPUs, else CPUs; gpu = GPUs (error without); cpu = CPUs",
     .range = {1, 1024}, .names = "--nproc-per-node", .group = G::JobShape, .kind = K::Custom,
     .value_name = "N|auto|gpu|cpu|gpu-or-1", .pet = "PET_NPROC_PER_NODE", .apply = apply_nproc,
     .help = "workers on this node: N; auto = GPUs, else CPUs; gpu = GPUs; cpu = CPUs; gpu-or-1 (default) = GPUs, else 1"},
    {.key = "node_rank", .field = field<&L::node_rank>(),
     .doc = "this node's rank; -1 = assigned by the master in join order (node 0 hosts)",
     .names = "--node-rank", .group = G::JobShape, .kind = K::Count, .value_name = "N", .pet = "PET_NODE_RANK",
     .help = "this node's rank (default: assigned by node 0 in join order; >= --nodes: a spare)"},
    {.key = "role", .field = field<&L::role>(), .names = "--role", .group = G::JobShape, .value_name = "NAME",
     .pet = "PET_ROLE", .help = "ROLE_NAME given to the workers"},
    {.key = "slurm", .field = field<&L::slurm>(),
     .doc = "take nodes / node rank / master / job id from the Slurm step (auto-detected too)",
     .names = "--slurm", .group = G::JobShape, .kind = K::Switch,
     .help = "take nodes, node rank and master from the Slurm step"},

    {.heading = "--- rendezvous ----------------------------------------------------------------",
     .key = "master", .field = field<&L::master>(),
     .doc = "HOST:PORT of the rendezvous on node 0; empty = --standalone on one node",
     .names = "--rdzv-endpoint,--master", .group = G::Rendezvous, .kind = K::Custom, .value_name = "HOST[:PORT]",
     .pet = "PET_RDZV_ENDPOINT", .apply = apply_endpoint,
     .help = "node 0's ddplaunch rendezvous (port default 29400); every node passes the same"},
    {.names = "--master-addr", .group = G::Rendezvous, .value_name = "HOST", .pet = "PET_MASTER_ADDR",
     .apply = apply_master_addr,
     .help = "torchrun static rendezvous: the endpoint is MASTER-ADDR:MASTER-PORT (default 127.0.0.1)"},
    {.names = "--master-port", .group = G::Rendezvous, .kind = K::Custom, .value_name = "PORT",
     .pet = "PET_MASTER_PORT", .apply = apply_master_port,
     .help = "the rendezvous port (default 29500); workers' MASTER_PORT is another, free port"},
    {.names = "--rdzv-backend", .group = G::Rendezvous, .value_name = "c10d|static|etcd", .pet = "PET_RDZV_BACKEND",
     .apply = apply_rdzv_backend,
     .help = "c10d/static: node 0's ddplaunch hosts the rendezvous; etcd (or etcd-v2): the launchers elect a "
             "coordinator through etcd at --rdzv-endpoint and replace it when it is lost"},
    {.key = "job_id", .field = field<&L::job_id>(),
     .doc = "must match on every node (at most 255 printable characters); default derived from `master`; etcd: "
            "required, new for each run (Slurm: the job and step id)",
     .names = "--rdzv-id,--job-id,--job", .group = G::Rendezvous, .value_name = "ID", .pet = "PET_RDZV_ID",
     .help = "job id, the same on every node (default: derived from the endpoint; etcd: required, new for each "
             "run)"},
    {.names = "--rdzv-conf", .group = G::Rendezvous, .kind = K::Custom, .value_name = "K=V,...",
     .pet = "PET_RDZV_CONF", .apply = apply_rdzv_conf,
     .help = "join_timeout/timeout -> --join-timeout, read_timeout -> --connect-timeout, keep_alive_* -> heartbeats; "
             "etcd: lease_ttl, coordinator_port, protocol=https, cacert, cert, key, username, password_file"},
    {.key = "standalone", .field = field<&L::standalone>(), .names = "--standalone", .group = G::Rendezvous,
     .kind = K::Switch, .pet = "PET_STANDALONE", .help = "one node; rendezvous on 127.0.0.1 with free ports"},
    {.key = "token", .field = field<&L::token>(),
     .doc = "shared secret: joins prove it with HMAC-SHA256, it never crosses the wire\n"
            "(environment fallback: DDPLAUNCH_TOKEN; --token values are hidden from ps).\n"
            "A multi-node job without one warns: anyone reaching the port can join.",
     .names = "--token", .group = G::Rendezvous, .value_name = "SECRET",
     .help = "shared secret for joins (or DDPLAUNCH_TOKEN); proven, never sent; hidden from ps", .secret = true},
    {.key = "token_file", .field = field<&L::token_file>(),
     .doc = "read the token from this file instead: your own regular file,\n"
            "mode 0600 or stricter, trailing newline dropped, not empty",
     .names = "--token-file", .group = G::Rendezvous, .value_name = "PATH",
     .help = "read the shared secret from PATH (yours, mode 0600; trailing newline dropped)"},
    {.key = "rendezvous_bind", .field = field<&L::rendezvous_bind>(),
     .doc = "where node 0's rendezvous listens; \"\" = the address(es) `master` resolves to\n"
            "on node 0; \"0.0.0.0\" or \"::\" = every address (:: is dual-stack)",
     .names = "--rdzv-bind", .group = G::Rendezvous, .value_name = "ADDR",
     .help = "where node 0 listens (default: its --master address(es); 0.0.0.0 or :: = all)"},
    {.key = "worker_port", .field = worker_port_field(),
     .doc = "MASTER_PORT of rank 0's c10d store: auto = a free port picked by the master\n"
            "each generation; or a fixed port, checked bindable right before spawn",
     .names = "--worker-port", .group = G::Rendezvous, .value_name = "PORT|auto",
     .help = "MASTER_PORT of rank 0's c10d store (default auto: a free port each generation)"},
    {.names = "--local-addr", .group = G::Rendezvous, .value_name = "ADDR", .pet = "PET_LOCAL_ADDR",
     .apply = apply_local_addr, .help = "accepted, not needed: node 0 sees the address each node connects from"},

    {.heading = "--- timing (seconds) ----------------------------------------------------------\n"
                "Every number has an allowed range (here and for flags and --set alike); values outside\n"
                "it, inf or nan stop the start naming the range.",
     .key = "join_timeout_s", .field = field<&L::join_timeout_s>(),
     .doc = "every node must join within this; the error names the missing ones", .range = {0.1, kWeek, s},
     .names = "--join-timeout", .group = G::Rendezvous, .kind = K::Seconds, .value_name = "SECONDS",
     .help = "wait this long for every node to join"},
    {.key = "connect_timeout_s", .field = field<&L::connect_timeout_s>(),
     .doc = "per TCP connect attempt to the master (retried until join_timeout_s)", .range = {0.1, kHour, s},
     .names = "--connect-timeout", .group = G::Rendezvous, .kind = K::Seconds, .value_name = "SECONDS",
     .help = "per TCP connect attempt to node 0"},
    {.key = "heartbeat_interval_s", .field = field<&L::heartbeat_interval_s>(),
     .doc = "heartbeats both ways between nodes and the master", .range = {0.05, 60, s},
     .names = "--heartbeat-interval", .group = G::Rendezvous, .kind = K::Seconds, .value_name = "SECONDS",
     .help = "seconds between heartbeats"},
    {.key = "heartbeat_timeout_s", .field = field<&L::heartbeat_timeout_s>(),
     .doc = "silence after which a node (or the master) is declared lost", .range = {0.1, kDay, s},
     .names = "--heartbeat-timeout", .group = G::Rendezvous, .kind = K::Seconds, .value_name = "SECONDS",
     .help = "silence after which a node is declared lost"},
    {.key = "grace_s", .field = field<&L::grace_s>(), .doc = "SIGTERM → SIGKILL when stopping workers",
     .range = {0, kHour, s}, .names = "--shutdown-timeout,--grace", .group = G::Stopping, .kind = K::Seconds,
     .value_name = "SECONDS", .pet = "PET_SHUTDOWN_TIMEOUT", .help = "SIGTERM -> SIGKILL grace when stopping workers"},
    {.names = "--signals-to-handle", .group = G::Stopping, .value_name = "SIG,...", .pet = "PET_SIGNALS_TO_HANDLE",
     .apply = apply_signals,
     .help = "SIGTERM, SIGINT, SIGHUP (and SIGQUIT) stop the workers; SIGUSR1/SIGUSR2 are always forwarded to them; "
             "others are refused"},
    {.key = "init_grace_s", .field = field<&L::init_grace_s>(),
     .doc = "opt-in: programs that never report through a shim count as running after this\n"
            "long (their later failures are runtime ones); 0 = never. Output never counts as initialised.",
     .range = {0, kDay, s}, .names = "--init-grace", .group = G::Program, .kind = K::Seconds, .value_name = "SECONDS",
     .help = "programs without shim count as initialised after this long (0: first output)"},
    {.key = "setup_timeout_s", .field = field<&L::setup_timeout_s>(),
     .doc = "bound on a rank's setup (spawn → init_process_group); 0 = unbounded", .range = {0, kWeek, s}},

    {.heading = "The group's init deadline, enforced by the launcher: it starts when the last rank of the\n"
                "job has entered init and ends when every rank is running. Injected as\n"
                "DDPLAUNCH_TIMEOUT_S for the program's information only — never applied to\n"
                "init_process_group, the store or collectives (PyTorch's own timeouts stay):\n"
                "  t = clamp(base_s + per_node_s*nodes + (dedicated NIC ? dedicated_nic_s : 0)\n"
                "            + rtt_factor * max RTT measured during rendezvous (s), min_s, max_s)\n"
                "      * restart_factor ^ generation   (re-clamped to max_s)",
     .key = "timeout.base_s", .field = field<&L::init_deadline, &InitDeadlineFormula::base_s>(),
     .doc = "the deadline's fixed part", .range = {0, kWeek, s}},
    {.key = "timeout.per_node_s", .field = field<&L::init_deadline, &InitDeadlineFormula::per_node_s>(),
     .doc = "added per node of the job", .range = {0, kHour, s}},
    {.key = "timeout.dedicated_nic_s", .field = field<&L::init_deadline, &InitDeadlineFormula::dedicated_nic_s>(),
     .doc = "added when NCCL_SOCKET_IFNAME names a dedicated interface", .range = {0, kHour, s}},
    {.key = "timeout.rtt_factor", .field = field<&L::init_deadline, &InitDeadlineFormula::rtt_factor>(),
     .doc = "seconds of timeout per second of RTT: 1 ms RTT adds 0.2 s", .range = {0, 1e6}},
    {.key = "timeout.min_s", .field = field<&L::init_deadline, &InitDeadlineFormula::min_s>(),
     .doc = "the deadline is never shorter", .range = {0, kWeek, s}},
    {.key = "timeout.max_s", .field = field<&L::init_deadline, &InitDeadlineFormula::max_s>(),
     .doc = "the deadline is never longer", .range = {0.1, kWeek, s}},
    {.key = "timeout.restart_factor", .field = field<&L::init_deadline, &InitDeadlineFormula::restart_factor>(),
     .doc = "the deadline grows by this factor on every restart", .range = {1, 100}},

    {.heading = "--- restarts --------------------------------------------------------------------",
     .key = "restart.max_restarts", .field = field<&L::restart, &RestartSettings::max_restarts>(),
     .doc = "torchrun's --max-restarts: whole-group restarts (on every node) after ANY failure",
     .range = {0, 10000}, .names = "--max-restarts", .group = G::Restarts, .kind = K::Count, .value_name = "N",
     .pet = "PET_MAX_RESTARTS", .help = "torchrun's budget: group restarts after ANY failure (default 0)"},
    {.key = "restart.init_restarts", .field = field<&L::restart, &RestartSettings::init_restarts>(),
     .doc = "automatic whole-group restarts after init failures, spent before max_restarts;\n"
            "a failure while running spends max_restarts only",
     .range = {0, 1000}, .names = "--init-restarts", .group = G::Restarts, .kind = K::Count, .value_name = "N",
     .help = "automatic group restarts after init failures, spent before --max-restarts (default 3)"},
    {.key = "restart.restart_on", .field = restart_on_field(),
     .doc = "which failures may restart: [init], or [init, runtime]", .names = "--restart-on", .group = G::Restarts,
     .value_name = "init,runtime", .help = "failures that restart the group (default init,runtime)"},
    {.key = "restart.backoff_s", .field = field<&L::restart, &RestartSettings::backoff_s>(),
     .doc = "wait before restart n: backoff_s * 2^(n-1) (+ jitter), at most backoff_max_s", .range = {0, kHour, s},
     .names = "--backoff", .group = G::Restarts, .kind = K::Seconds, .value_name = "SECONDS",
     .help = "wait before the first restart (doubles each time)"},
    {.key = "restart.backoff_max_s", .field = field<&L::restart, &RestartSettings::backoff_max_s>(),
     .doc = "the longest wait between restarts", .range = {0, kDay, s}},
    {.key = "restart.jitter", .field = field<&L::restart, &RestartSettings::jitter>(),
     .doc = "fraction of the backoff added at random", .range = {0, 1}},
    {.names = "--monitor-interval", .group = G::Restarts, .kind = K::Custom, .value_name = "SECONDS",
     .pet = "PET_MONITOR_INTERVAL", .apply = apply_monitor_interval,
     .help = "accepted, not needed: ddplaunch reacts to worker events at once"},

    {.heading = "--- lost nodes (README \"Lost nodes\"); off unless spares > 0 or min_nodes < nodes ------",
     .key = "membership.min_nodes", .field = field<&L::membership, &MembershipConfig::min_nodes>(),
     .doc = "elastic minimum (--nodes MIN:MAX sets it); 0 = nodes (fixed size)", .range = {0, 65536}},
    {.key = "membership.spares", .field = field<&L::membership, &MembershipConfig::spares>(),
     .doc = "idle launchers that take a lost or excluded node's slot", .range = {0, 65536}, .names = "--spares",
     .group = G::JobShape, .kind = K::Count, .value_name = "K",
     .help = "keep up to K extra launchers idle as hot spares; one takes a lost node's place (same ranks)"},
    {.key = "membership.last_call_s", .field = field<&L::membership, &MembershipConfig::last_call_s>(),
     .doc = "elastic: after MIN nodes joined, wait this long for more", .range = {0, kDay, s}, .names = "--last-call",
     .group = G::JobShape, .kind = K::Seconds, .value_name = "SECONDS",
     .help = "elastic: after MIN nodes joined, wait this long for more before starting (default 30)"},
    {.key = "membership.below_min_wait_s", .field = field<&L::membership, &MembershipConfig::below_min_wait_s>(),
     .doc = "too few nodes and no spare: wait this long for a launcher, then fail", .range = {0, kWeek, s}},
    {.key = "membership.exclude_after", .field = field<&L::membership, &MembershipConfig::exclude_after>(),
     .doc = "a node whose ranks fail init first this many times is excluded (if replaceable)", .range = {1, 1000}},
    {.key = "membership.exclude_cooldown_s", .field = field<&L::membership, &MembershipConfig::exclude_cooldown_s>(),
     .doc = "an excluded host may join again after this long", .range = {0, kWeek, s}},
    {.key = "membership.max_changes", .field = field<&L::membership, &MembershipConfig::max_changes>(),
     .doc = "membership changes before the job gives up (a flapping node)", .range = {0, 100000}},

    {.heading = "--- the coordinator on etcd (--rdzv-backend etcd) --------------------------------",
     .key = "etcd.endpoints", .field = field<&L::etcd, &EtcdConfig::endpoints>(),
     .doc = "etcd members HOST:PORT[,HOST:PORT...]; \"\" = off: node 0 hosts the rendezvous.\n"
            "Set by --rdzv-backend etcd --rdzv-endpoint LIST; the launchers elect the coordinator"},
    {.key = "etcd.lease_ttl_s", .field = field<&L::etcd, &EtcdConfig::lease_ttl_s>(),
     .doc = "a lost coordinator's lease expires after this long (--rdzv-conf lease_ttl=S)", .range = {1, 300, s}},
    {.key = "etcd.coordinator_port", .field = field<&L::etcd, &EtcdConfig::coordinator_port>(),
     .doc = "where the elected launcher hosts the rendezvous; 0 = any free port\n"
            "(--rdzv-conf coordinator_port=P)", .range = {0, 65535}},
    {.key = "etcd.protocol", .field = choice_field<&L::etcd, &EtcdConfig::protocol, kEtcdProtocolNames>(),
     .doc = "http | https: TLS to etcd, the server's certificate checked against cacert and\n"
            "the endpoint's name or IP (--rdzv-conf protocol=https; https:// endpoints imply it)"},
    {.key = "etcd.cacert", .field = field<&L::etcd, &EtcdConfig::cacert>(),
     .doc = "PEM file of the CA that signed etcd's certificate; \"\" = the system's CAs\n"
            "(--rdzv-conf cacert=PATH)"},
    {.key = "etcd.cert", .field = field<&L::etcd, &EtcdConfig::cert>(),
     .doc = "client certificate (PEM) for an etcd with --client-cert-auth (--rdzv-conf cert=PATH)"},
    {.key = "etcd.key", .field = field<&L::etcd, &EtcdConfig::key>(),
     .doc = "the client certificate's private key (PEM) (--rdzv-conf key=PATH)"},
    {.key = "etcd.username", .field = field<&L::etcd, &EtcdConfig::username>(),
     .doc = "etcd user (etcd's auth enabled); the password from password_file, else\n"
            "DDPLAUNCH_ETCD_PASSWORD (--rdzv-conf username=NAME)"},
    {.key = "etcd.password_file", .field = field<&L::etcd, &EtcdConfig::password_file>(),
     .doc = "the etcd user's password: this file's first line; your own file, mode 0600\n"
            "(--rdzv-conf password_file=PATH; never password=, which ps would show)"},

    {.heading = "--- runtime hangs (learnt from each rank's training steps; sections have their own) ---",
     .key = "hang.action", .field = choice_field<&L::hang_action, kHangActionSettingNames>(),
     .doc = "at the hang deadline: report | restart | stop | auto (restart when\nrestarts were asked, else stop)",
     .names = "--hang-action", .group = G::Restarts, .value_name = "report|restart|stop|auto",
     .help = "at the hang deadline (default auto: restart when restarts were asked, else stop)"},
    {.key = "hang.warmup_steps", .field = field<&L::hang, &HangSettings::warmup_steps>(),
     .doc = "a rank's first steps teach nothing (compilation, caches)", .range = {0, 1e6, "steps"}},
    {.key = "hang.suspect_factor", .field = field<&L::hang, &HangSettings::suspect_factor>(),
     .doc = "suspect: no progress for this many times the largest step seen (only reported, with stacks)",
     .range = {1, 1000}},
    {.key = "hang.suspect_floor_s", .field = field<&L::hang, &HangSettings::suspect_floor_s>(),
     .doc = "...never sooner than this", .range = {0.5, kWeek, s}, .names = "--hang-suspect-floor",
     .group = G::Restarts, .kind = K::Seconds, .value_name = "SECONDS",
     .help = "a rank without progress is suspect (stacks shown, nothing stopped) no sooner than this (default 60)"},
    {.key = "hang.hang_factor", .field = field<&L::hang, &HangSettings::hang_factor>(),
     .doc = "hang: no progress for this many times the largest step...", .range = {1, 1000}},
    {.key = "hang.hang_minimum_s", .field = field<&L::hang, &HangSettings::hang_minimum_s>(),
     .doc = "...never sooner than this", .range = {1, kWeek, s}, .names = "--hang-minimum", .group = G::Restarts,
     .kind = K::Seconds, .value_name = "SECONDS",
     .help = "the hang deadline is never shorter than this (default 1800; learnt: 20 x the largest step)"},
    {.key = "hang.section_suspect_floor_s", .field = field<&L::hang, &HangSettings::section_suspect_floor_s>(),
     .doc = "inside ddplaunch_shim.section(\"checkpoint\"): learnt per section name", .range = {0.5, kWeek, s}},
    {.key = "hang.section_hang_minimum_s", .field = field<&L::hang, &HangSettings::section_hang_minimum_s>(),
     .doc = "the hang deadline inside a section is never shorter than this", .range = {1, kWeek, s}},
    {.key = "hang.history_file", .field = history_file_field(),
     .doc = "past runs' init and step times (\"\" = ~/.local/state/ddplaunch/history, off = none)",
     .names = "--history-file", .group = G::Restarts, .value_name = "PATH|off",
     .help = "where past runs' init and step times are kept (default ~/.local/state/ddplaunch/history)"},

    {.heading = "--- stragglers (the rank every other rank waits for) ---",
     .key = "straggler.action", .field = choice_field<&L::straggler_action, kStragglerActionNames>(),
     .doc = "a straggler that holds the job back for swap_after_s: report (say it; the job goes on)\n"
            "| restart-without (with a spare: its node is excluded and the spare takes its slot)",
     .names = "--straggler-action", .group = G::Restarts, .value_name = "report|restart-without",
     .help = "a persistent straggler is only reported (default), or with --spares its node is swapped for a spare"},
    {.key = "straggler.swap_after_s", .field = field<&L::straggler_swap_after_s>(),
     .doc = "restart-without: how long a straggler holds the job back before its node is swapped\n"
            "(a restart costs the steps since the program's last checkpoint)",
     .range = {1, kWeek, s}},

    {.heading = "--- workers ---------------------------------------------------------------------",
     .key = "shim", .field = choice_field<&L::shim, kShimChoiceNames>(),
     .doc = "init reporting: auto (NCCL LD_PRELOAD when built with NCCL, Python\n"
            "helper for python programs), preload, python, none",
     .names = "--shim", .group = G::Program, .value_name = "auto|preload|python|none",
     .help = "init reporting: NCCL LD_PRELOAD, Python helper, or none"},
    {.names = "-m,--module", .group = G::Program, .kind = K::Switch, .pet = "PET_MODULE", .apply = apply_module,
     .help = "run PROGRAM as `python -m PROGRAM`"},
    {.names = "--no-python", .group = G::Program, .kind = K::Switch, .pet = "PET_NO_PYTHON", .apply = apply_no_python,
     .help = "run PROGRAM as is, never through python"},
    {.names = "--run-path", .group = G::Program, .kind = K::Switch, .pet = "PET_RUN_PATH", .apply = apply_run_path,
     .help = "run the script with python (torchrun's runpy in the agent); wins over --no-python"},
    {.names = "--python", .group = G::Program, .value_name = "PATH", .apply = apply_python,
     .help = "interpreter for scripts (default: $PYTHON_EXEC, else /usr/bin/python3, else python3)"},
    {.names = "--start-method", .group = G::Program, .value_name = "spawn|fork|forkserver", .pet = "PET_START_METHOD",
     .apply = apply_start_method, .help = "accepted: every method means one process per rank here"},
    {.key = "pause_ranks", .field = field<&L::pause_ranks>(), .doc = "start these global ranks stopped, for `gdb -p`",
     .names = "--pause-ranks", .group = G::Debugging, .value_name = "R,R", .help = "start these ranks stopped, for gdb -p"},
    {.key = "debug", .field = field<&L::debug>(),
     .doc = "debugging session: process groups the program gives no timeout wait a day in collectives (Python shim)",
     .names = "--debug", .group = G::Debugging, .kind = K::Switch,
     .help = "process groups without a timeout of the program's wait 24 h in collectives, so ranks waiting for one "
             "you hold in pdb are not failed by gloo/NCCL meanwhile"},
    {.names = "--watch", .group = G::Debugging, .kind = K::Switch, .apply = apply_status_watch,
     .help = "with `ddplaunch status`: redraw the status every second (like top) until the job ends; Ctrl-C stops"},
    {.names = "--json", .group = G::Debugging, .kind = K::Switch, .apply = apply_status_json,
     .help = "with `ddplaunch status`: one JSON object (job, nodes, ranks: state, steps, progress age) for scripts; "
             "with --watch one per second, a line each"},
    {.names = "--rank", .group = G::Output, .kind = K::Count, .value_name = "RANK", .apply = apply_tail_rank,
     .help = "with `ddplaunch tail`: the global rank whose output to follow (its last lines, then as they come)"},
    {.names = "--gdb", .group = G::Debugging, .kind = K::Count, .value_name = "RANK", .apply = apply_gdb_rank,
     .help = "with `ddplaunch debug`: attach gdb to that rank at once (on its node), relayed to this terminal"},
    {.key = "unattended_stop_s", .field = field<&L::unattended_stop_s>(),
     .doc = "no terminal started the job and nobody attached (`ddplaunch debug`): a rank stopped in its debugger is\n"
            "continued after this long, so a forgotten breakpoint() never holds a batch job until its walltime",
     .range = {1, kWeek, s}, .names = "--unattended-stop-timeout", .group = G::Debugging, .kind = K::Seconds,
     .value_name = "SECONDS",
     .help = "with no terminal and nobody attached, a stopped rank is continued after this long (default 1800)"},
    {.key = "post_mortem", .field = field<&L::post_mortem>(),
     .doc = "a Python rank's uncaught exception stops it in pdb at the raising frame (the group is held)",
     .names = "--post-mortem", .group = G::Debugging, .kind = K::Switch,
     .help = "an uncaught exception stops the rank in pdb at the raising frame, answered at the debug console; "
             "the job ends as it would have once you continue"},
    {.key = "post_mortem_timeout_s", .field = field<&L::post_mortem_timeout_s>(),
     .doc = "how long a rank waits in post-mortem pdb before it exits with its exception", .range = {1, kWeek, s},
     .names = "--post-mortem-timeout", .group = G::Debugging, .kind = K::Seconds, .value_name = "SECONDS",
     .help = "a rank stopped by --post-mortem exits with its exception after this long (default 1800)"},
    {.key = "log_dir", .field = field<&L::log_dir>(),
     .doc = "per-rank log files: rank_<R>.log = current generation, rank_<R>.gen<G>.log = earlier",
     .names = "--log-dir", .group = G::Output, .value_name = "DIR", .pet = "PET_LOG_DIR",
     .help = "write DIR/rank_<R>.log per rank (the current generation; earlier ones kept as rank_<R>.gen<G>.log)"},
    {.key = "trace", .field = field<&L::trace_file>(),
     .doc = "the job's timeline, written by the master when the job ends: Chrome Trace Event JSON to this file\n"
            "(Perfetto, chrome://tracing) and a self-contained HTML page beside it (.json → .html); with\n"
            "log_dir, also timeline.json and timeline.html there. `ddplaunch timeline` takes it while the job runs",
     .names = "--trace", .group = G::Output, .value_name = "FILE",
     .help = "write the job's timeline at its end: trace JSON to FILE (Perfetto) and the HTML page beside it"},
    {.key = "report", .field = field<&L::report_file>(),
     .doc = "what the job spent its time on, written by the master when the job ends, as one JSON object:\n"
            "time to start, each restart's loss, debugger holds, hangs, the effective training share\n"
            "(ETT), the straggler episodes and the exit status",
     .names = "--report", .group = G::Output, .value_name = "FILE",
     .help = "write the job's time account and straggler episodes as JSON to FILE at its end"},
    {.key = "redirects", .field = parsed_field<&L::redirects, parse_stream_spec, stream_spec_text, stream_spec_choices>(),
     .doc = "torchrun's -r: streams only to the log file: 1 stdout, 2 stderr, 3 both, or \"0:3,1:1\"",
     .names = "-r,--redirects", .group = G::Output, .kind = K::Custom, .value_name = "0-3|R:S,...",
     .pet = "PET_REDIRECTS", .apply = apply_redirects,
     .help = "streams sent only to the log file (1 stdout, 2 stderr, 3 both; or LOCAL_RANK:S,...)"},
    {.key = "tee", .field = parsed_field<&L::tee, parse_stream_spec, stream_spec_text, stream_spec_choices>(),
     .doc = "torchrun's -t: streams to the log file and the terminal (same forms)", .names = "-t,--tee",
     .group = G::Output, .kind = K::Custom, .value_name = "0-3|R:S,...", .pet = "PET_TEE", .apply = apply_tee,
     .help = "streams sent to the log file and the terminal (as -r); with -r/-t, unlisted streams skip the file"},
    {.key = "local_ranks_filter", .field = field<&L::local_ranks_filter>(),
     .doc = "show only these local ranks' output on the terminal; [] = all; log files (log_dir) are unaffected",
     .names = "--local-ranks-filter", .group = G::Output, .kind = K::Custom, .value_name = "R,R",
     .pet = "PET_LOCAL_RANKS_FILTER", .apply = apply_local_ranks_filter,
     .help = "show only these local ranks' output on the terminal (log files are unaffected)"},
    {.key = "collapse_output", .field = choice_field<&L::collapse_output, kCollapseOutputNames>(),
     .doc = "identical lines of several ranks within 150 ms print once, as \"[ranks 0-3] text\":\n"
            "auto (the default) = when the output is a terminal (a pipe or file keeps every rank's line,\n"
            "as torchrun prints them), on = there too, off = every rank's line everywhere",
     .names = "--collapse-output", .group = G::Output, .value_name = "auto|on|off",
     .help = "print identical lines of several ranks once, naming the ranks: auto (default) = on a terminal"},
    {.names = "--no-collapse", .group = G::Output, .kind = K::Switch, .apply = apply_no_collapse,
     .help = "print every rank's line, identical or not, on a terminal too (--collapse-output off)"},
    {.key = "ranks_filter", .field = field<&L::ranks_filter>(),
     .doc = "show only these global ranks' output on the terminal, on every node; [] = all; log files\n"
            "and the root cause of a failure are unaffected, a rank stopped in a debugger is always shown",
     .names = "--ranks-filter", .group = G::Output, .kind = K::Custom, .value_name = "5,8-11",
     .apply = apply_ranks_filter,
     .help = "show only these global ranks' output on the terminal (a failed rank's last lines and a rank in its "
             "debugger are still shown)"},
    {.key = "numa_binding", .field = numa_binding_field(),
     .doc = "\"\" (none), node, socket, exclusive, core-complex: CPU affinity by the GPU's NUMA node",
     .names = "--numa-binding", .group = G::Placement, .value_name = "node|socket|exclusive|core-complex",
     .pet = "PET_NUMA_BINDING", .apply = apply_numa_binding,
     .help = "bind each worker's CPUs (and prefer its memory) to its GPU's NUMA node; without GPUs: an even slice "
             "of cores"},
    {.key = "virtual_local_rank", .field = field<&L::virtual_local_rank>(),
     .doc = "LOCAL_RANK=0 and CUDA_VISIBLE_DEVICES = the worker's one GPU (torchrun's flag)",
     .names = "--virtual-local-rank", .group = G::Placement, .kind = K::Switch, .pet = "PET_VIRTUAL_LOCAL_RANK",
     .help = "every worker gets LOCAL_RANK=0 and CUDA_VISIBLE_DEVICES = its one GPU"},
    {.key = "version_mismatch", .field = choice_field<&L::version_mismatch, kVersionMismatchNames>(),
     .doc = "nodes with different program/NCCL/driver versions: warn or refuse", .names = "--version-mismatch",
     .group = G::Checks, .value_name = "warn|refuse", .help = "nodes with differing launcher/program/NCCL versions"},
    {.key = "peer_probe", .field = field<&L::peer_probe>(),
     .doc = "multi-node: before any worker starts, every node connects to its ring neighbour (every\n"
            "peer on jobs of up to 8 nodes) over each interface, checks the source address, samples the\n"
            "throughput, and the master sets the interface that works everywhere (or verifies yours,\n"
            "NCCL_SOCKET_IFNAME), refusing the job with the failing pair named",
     .names = "--no-peer-probe", .group = G::Checks, .kind = K::Switch, .apply = apply_no_peer_probe,
     .help = "skip the peer probe (every node connecting to its neighbours over each interface before workers start)"},

    {.names = "--hosts", .group = G::FanOut, .value_name = "HOST,HOST|LIST", .apply = apply_hosts,
     .help = "start one ddplaunch per host over ssh (first host = master), e.g. --hosts gpu[01-04]"},
    {.names = "--hostfile", .group = G::FanOut, .value_name = "FILE", .apply = apply_hostfile,
     .help = "as --hosts, from a DeepSpeed hostfile: one `HOST slots=N` per line (N = that host's --nproc-per-node)"},
    {.names = "--include", .group = G::FanOut, .value_name = "HOST[:SLOT,..]@..", .apply = apply_include,
     .help = "keep only these hosts (or slots = GPU indices) of --hosts/--hostfile"},
    {.names = "--exclude", .group = G::FanOut, .value_name = "HOST[:SLOT,..]@..", .apply = apply_exclude,
     .help = "leave out these hosts (or slots) of --hosts/--hostfile"},
    {.names = "-x,--export", .group = G::FanOut, .value_name = "VAR[=VALUE]", .apply = apply_export,
     .help = "pass VAR (its value here, or VALUE) to every host's ddplaunch and workers; repeatable (mpirun's -x). "
             "NCCL_*, GLOO_*, TORCH_*, TORCHELASTIC_*, PYTHON*, OMP_*, PET_* and DDPLAUNCH_* pass by themselves"},
    {.names = "--env-file", .group = G::FanOut, .value_name = "FILE", .apply = apply_env_file,
     .help = "pass the VAR=VALUE lines of FILE to every host (# comments; `export ` prefixes allowed; -x wins)"},
    {.names = "--token-stdin", .group = G::FanOut, .kind = K::Switch, .apply = apply_token_stdin,
     .help = "read the rendezvous token from stdin's first line (how the fan-out hands it over)"},
    {.names = "--env-stdin", .group = G::FanOut, .kind = K::Switch, .apply = apply_env_stdin,
     .help = "read the variables a fan-out passes from stdin, after the token line (never in a command line, "
             "which every local user can read)"},
    {.names = "--stop-on-stdin-eof", .group = G::FanOut, .kind = K::Switch, .apply = apply_stop_on_stdin_eof,
     .help = "stop as on SIGTERM when stdin ends (the fan-out's ssh connection); a line SIGINT etc. acts as that "
             "signal"},
};

}  // namespace

std::span<const OptionSpec> option_table() { return kOptions; }

}  // namespace ddplaunch
