// ddplaunch: one per node. main reads as the pipeline it runs: parse → guard → config →
// (inspect a job, or) plan the node → run its agent (rendezvous → spawn → supervise → report).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "seat/etcd_seat.h"
#include "inspect/job_inspection.h"
#include "agent/node_agent.h"
#include "agent/node_assignment.h"
#include "agent/node_plan.h"
#include "config/command_line.h"
#include "config/config_docs.h"
#include "config/job_setup.h"
#include "config/token_source.h"
#include "ddplaunch/rendezvous/client.h"
#include "ddplaunch/rendezvous/printable.h"
#include "output/log_directory.h"
#include "env/worker_environment.h"
#include "ddplaunch/base/exit_codes.h"
#include "fanout/fanout_driver.h"
#include "fanout/stdin_control.h"
#include "job_record.h"
#include "log_setup.h"
#include "placement/node_placement.h"
#include "policy/init_deadline_formula.h"
#include "supervise/descendant_sweep.h"
#include "supervise/orphan_guard.h"
#include "supervise/resource_limits.h"

using namespace ddplaunch;

namespace {

// Closed stdio (`ddplaunch ... >&- 2>&-`): /dev/null in its place before anything opens a
// descriptor, so that no pipe or socket of the launcher's (the orphan guard's command pipe)
// becomes fd 0, 1 or 2, where every log line would be written into it.
void open_missing_stdio() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", O_RDWR);  // the lowest free descriptor: this one
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

int print_version() {
  std::printf("ddplaunch %s\n", DDPLAUNCH_VERSION);
  return 0;
}

int fail(const std::vector<std::string>& errors) { return log_errors_and_refuse(errors); }

// Whether the command line set `key` (a flag or --set), not a default or a hint.
bool given(const CommandLine& cl, std::string_view key) {
  return std::any_of(cl.settings.begin(), cl.settings.end(), [&](const auto& s) { return s.first == key; });
}

// --dry-run: the resolved config and every local worker's environment, as node 0 of a
// job whose ports are not chosen yet.
int print_dry_run(const LaunchConfig& config, const NodePlan& plan, const preflight::GpuInfo& gpus) {
  std::printf("# resolved configuration\n%s", describe(config).c_str());
  rendezvous::Assignment planned;  // what the master would assign this node
  planned.node_rank = std::max(config.node_rank, 0);
  planned.node_count = config.nodes;
  planned.rank_offset = planned.node_rank * plan.nproc;
  planned.world_size = config.nodes * plan.nproc;
  planned.worker_master_addr = plan.master_ip;
  planned.worker_master_port = config.worker_port.fixed.value_or(0);
  // The first generation's deadline, as the policy computes it, before any node was probed.
  const InitDeadlineValue deadline = apply_init_deadline_formula(config.init_deadline, {.nodes = config.nodes});
  planned.init_deadline_s = deadline.seconds;
  planned.run_id = config.job_id;
  const NodeAssignment a = node_assignment(planned, plan, "(created at start)", "", 0);
  auto known = [](const std::string& v) { return v.empty() ? "unknown" : v.c_str(); };
  std::printf("# this node: %d GPU(s) (%s), driver %s, CUDA %s, NCCL %s\n# GPU notes: %s\n", gpus.count,
              std::string(preflight::gpu_source_name(gpus.source)).c_str(), known(gpus.driver_version), known(gpus.cuda_version), known(gpus.nccl_version),
              gpus.note.c_str());
  std::printf("# timeout: %s\n", deadline.explained.c_str());
  std::printf("# stdin: %s\n",
              plan.inherit_stdin
                  ? "data piped into ddplaunch: every local worker shares it, as under torchrun (no debugger keyboard)"
                  : "each worker's stdin is its debugger's keyboard: a breakpoint() on any rank is answered at the "
                    "terminal that started the job (or `ddplaunch debug`)");
  if (config.worker_port.automatic()) std::printf("# MASTER_PORT: 0 here; a free port is picked on the master at start\n");
  for (int local = 0; local < plan.nproc; ++local) {
    std::printf("# environment of local rank %d (global rank %d)\n", local, a.rank_offset + local);
    Environment env = build_worker_environment(plan.base_env, a, local);
    if (config.virtual_local_rank) narrow_to_own_gpu(env, local);
    if (static_cast<std::size_t>(local) < plan.placement.size())
      std::printf("# placement: %s\n", placement::describe_placement(plan.placement[static_cast<std::size_t>(local)]).c_str());
    // What ddplaunch sets (or overrides) first, then what the worker inherits unchanged.
    std::string set, inherited;
    for (const auto& [key, value] : env) {
      auto it = plan.base_env.find(key);
      (it != plan.base_env.end() && it->second == value ? inherited : set) += key + "=" + value + "\n";
    }
    std::printf("# set by ddplaunch\n%s# inherited unchanged from ddplaunch's environment\n%s", set.c_str(),
                inherited.c_str());
  }
  return 0;
}

// --help, --version, --print-default-config and --man: the documents made from the option
// table need nothing more than the parsed command line. nullopt: none was asked for.
std::optional<int> print_document(const CommandLine& cl) {
  if (cl.help) return std::fputs(usage_text().c_str(), stdout), 0;
  if (cl.version) return print_version();
  if (cl.print_default_config) return std::fputs(default_config_yaml().c_str(), stdout), 0;
  if (cl.man) return std::fputs(man_page(DDPLAUNCH_VERSION).c_str(), stdout), 0;
  return std::nullopt;
}

// The orphan guard starts before anything can start a thread or install a signal handler;
// then logging and the process-wide settings every launcher needs (each only warns).
void guard_this_process(OrphanGuard& guard) {
  std::string guard_error = guard.start(OrphanGuard::Sweep::ByReexec);
  init_logging();
  if (!guard_error.empty()) spdlog::warn("{}; workers may outlive a SIGKILLed launcher", guard_error);
  std::signal(SIGPIPE, SIG_IGN);
  // Orphans of the job (double-forked, setsid'd) reparent to us, so the sweep at a
  // generation's end finds them even without the job tag (docs/ARCHITECTURE.md).
  if (std::string error = become_subreaper(); !error.empty())
    spdlog::warn("cannot become a child subreaper ({}): only the job tag finds workers' escaped descendants", error);
  if (std::string warning = raise_descriptor_limit(); !warning.empty()) spdlog::warn("{}", warning);
}

// A fan-out's own options without --hosts are a mistake; a fan-out's node (--token-stdin)
// reads the token as stdin's first line, never from argv, and (--env-stdin) the variables the
// fan-out passes after it. "" or the error.
std::string take_fanout_node_input(const CommandLine& cl, Environment& env) {
  if (!cl.fanout.exported.empty() || !cl.fanout.env_file.empty())
    return "-x/--export and --env-file pass variables to the hosts of --hosts/--hostfile; without them this "
           "ddplaunch's workers inherit this shell's environment: export the variable here instead";
  if (cl.token_stdin) {
    fanout::TokenLine line = fanout::read_token_line(STDIN_FILENO, std::chrono::seconds(30));
    if (!line.error.empty()) return line.error;
    env["DDPLAUNCH_TOKEN"] = line.token;
  }
  if (cl.env_stdin) {
    fanout::ReceivedVariables received = fanout::read_environment_block(STDIN_FILENO, std::chrono::seconds(30));
    if (!received.error.empty()) return received.error;
    for (const auto& [name, value] : received.variables) {
      env[name] = value;
      // Into this process's own environment too, as `env NAME=VALUE ddplaunch` would (PATH finds
      // the program, TMPDIR places files); /proc/PID/environ still shows only the first block.
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  return "";
}

bool inspects_a_job(Subcommand subcommand) {
  return subcommand == Subcommand::Status || subcommand == Subcommand::Stacks || subcommand == Subcommand::Debug ||
         subcommand == Subcommand::Timeline || subcommand == Subcommand::Tail;
}

// status, stacks, debug, timeline, tail: a running job's master (found through etcd, --master, or
// this node's record of the job), or a finished job's --log-dir.
int inspect_job(const CommandLine& cl, LaunchConfig& config) {
  // `ddplaunch timeline --log-dir DIR`: a finished job's files, no master to ask.
  const bool timeline_from_log_dir = cl.subcommand == Subcommand::Timeline && given(cl, "log_dir") && !given(cl, "master");
  if (timeline_from_log_dir) return write_job_timeline(config, true);
  if (etcd_enabled(config) && cl.subcommand != Subcommand::Debug) {
    auto coordinator = find_coordinator(config);  // the elected launcher's rendezvous
    if (!coordinator) return fail({coordinator.error});
    config.master = *coordinator;
  }
  if (!etcd_enabled(config) && !given(cl, "master")) {  // this node's record of the job
    auto record = choose_job_record(running_job_records(), given(cl, "job_id") ? config.job_id : "",
                                    refused_job_record_directories());
    if (!record) return fail({record.error});
    config.master = record->master;
    config.job_id = record->job_id;
    if (config.token.empty()) config.token = record->token;
  }
  // --master (or etcd) and no token: the one this user's own launchers of the job keep here
  // that the master accepts.
  if (config.token.empty()) config.token = token_the_master_accepts(config, recorded_tokens(running_job_records(), config.job_id, config.master));
  switch (cl.subcommand) {
    case Subcommand::Status: return print_status(config, cl.status_watch, cl.status_json);
    case Subcommand::Stacks: return print_stacks(config);
    case Subcommand::Debug: return open_debug_console(config, cl.gdb_rank);
    case Subcommand::Tail: return follow_rank_output(config, cl.tail_rank);
    default: return write_job_timeline(config, false);
  }
}

// Rendezvous, spawn and supervise: all inside the one event loop, until the job ends here.
int run_node_agent(OrphanGuard& guard, NodePlan plan, bool stop_on_stdin_eof) {
  boost::asio::io_context io;
  NodeAgent agent(io, guard, std::move(plan));
  if (std::string error = agent.start(); !error.empty()) return fail({error});
  if (stop_on_stdin_eof)  // after start: its signals are handled
    fanout::watch_stdin_for_stop(STDIN_FILENO, [&io, &agent](std::string line) {
      boost::asio::post(io, [&agent, line = std::move(line)] { agent.on_console_line(line); });
    });
  io.run();
  return agent.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  // `ddplaunch --version` alone is answered before the command-line parser is built, and
  // ends without the static destructors: none of their objects was used, and running them
  // costs page faults.
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    print_version();
    std::fflush(stdout);
    _exit(0);
  }
  // The orphan guard of a launcher that died, re-run to sweep (supervise/orphan_guard.cpp).
  if (argc >= 2 && std::string_view(argv[1]) == kGuardSweepArgument) return run_guard_sweep(argc, argv);
  open_missing_stdio();
  // Keep the arguments, then hide a --token value from ps: before the guard starts, so that
  // its view of this memory (shared or copied) is clean too.
  const std::vector<std::string> args(argv + 1, argv + argc);
  scrub_token_arguments(argc, argv);
  // The same for the secrets in the environment block (/proc/PID/environ), read first.
  Environment env = current_environment();
  scrub_secret_environment();

  // Parse the command line (pure: no thread, no file).
  CommandLine cl = parse_command_line(args);
  if (auto printed = print_document(cl)) return *printed;

  // Guard this process: the orphan guard, logging, signals, limits.
  OrphanGuard guard;
  guard_this_process(guard);
  if (!cl.errors.empty()) return fail(cl.errors);

  // Fan-out: one ddplaunch per host over ssh; this one only checks, starts and relays.
  if (cl.fanout.requested()) return fanout::run_fanout(cl, env);
  if (std::string error = take_fanout_node_input(cl, env); !error.empty()) return fail({error});

  // Resolve the config: YAML, flags, environment, cluster.
  JobSetup setup = resolve_job_setup(cl, env);
  for (const auto& note : setup.notes) spdlog::info("{}", note);
  for (const auto& warning : setup.warnings) spdlog::warn("{}", warning);
  if (!setup.errors.empty()) return fail(setup.errors);
  LaunchConfig& config = setup.config;

  // Inspect a job instead of running one: status, stacks, debug, timeline, tail.
  if (inspects_a_job(cl.subcommand)) return inspect_job(cl, config);
  if (config.node_rank >= 0) set_log_node(config.node_rank, config.nodes);  // every line names its node

  // Plan this node: the master, GPUs and workers, their environment, the console.
  Result<PlannedNode> planned = plan_node(config, cl, env);
  if (!planned) return fail({planned.error});
  NodePlan& plan = planned.value->plan;
  if (config.dry_run) return print_dry_run(config, plan, planned->gpus);
  if (std::string error = ready_node_to_run(plan); !error.empty()) return fail({error});

  // --log-dir is opened now, once: files go into this directory even if its path is swapped later.
  if (!plan.config.log_dir.empty())
    if (auto dir = LogDirectory::open_once(plan.config.log_dir); !dir) return fail({dir.error});

  // Run the node: rendezvous, spawn and supervise.
  return run_node_agent(guard, std::move(plan), cl.stop_on_stdin_eof);
}
