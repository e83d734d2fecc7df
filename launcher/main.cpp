// ddplaunch: one per node. main reads as the pipeline it runs: parse → guard → config →
// (inspect a job, or) plan the node → run its agent (rendezvous → spawn → supervise → report).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <cstdio>
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

#include "agent/etcd_seat.h"
#include "agent/node_agent.h"
#include "agent/node_assignment.h"
#include "agent/node_plan.h"
#include "agent/status_table.h"
#include "agent/rank_tail_relay.h"
#include "agent/timeline_files.h"
#include "config/command_line.h"
#include "config/config_docs.h"
#include "config/job_setup.h"
#include "config/token_source.h"
#include "console/remote_console.h"
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
#include "policy/stacks_query.h"
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

int fail(const std::vector<std::string>& errors) {
  for (const auto& e : errors) spdlog::error("{}", e);
  return kExitConfigError;
}

int print_status(const LaunchConfig& config, bool watch, bool json) {
  auto endpoint = parse_host_port(config.master);
  if (!endpoint) return fail({"ddplaunch status needs --master HOST:PORT of the running job's rendezvous"});
  std::string error;
  auto ask = [&] {
    const auto port = static_cast<std::uint16_t>(endpoint->port);
    return json ? rendezvous::query_master(endpoint->host, port, config.job_id, config.token, kStatusJsonQuery,
                                           std::chrono::seconds(5), error)
                : rendezvous::query_status(endpoint->host, port, config.job_id, config.token, std::chrono::seconds(5),
                                           error);
  };
  std::string text = ask();
  // --watch: the table again every second, in place on a terminal (a blank line between
  // tables otherwise), until the job has ended (its master is gone, or says so).
  const bool redraw = ::isatty(STDOUT_FILENO) == 1 && !json;
  for (bool shown_once = false; watch && error.empty(); shown_once = true) {
    const std::string table = json ? text + "\n" : rendezvous::printable_lines(text);
    std::fputs(redraw ? "\x1b[H\x1b[2J" : (shown_once && !json ? "\n" : ""), stdout);
    std::fputs(table.c_str(), stdout);
    std::fflush(stdout);
    if (table.find(json ? "\"phase\":\"Ended\"" : "the job has ended.") != std::string::npos) return 0;
    std::this_thread::sleep_for(std::chrono::seconds(1));
    text = ask();
    if (!error.empty() && error.find("Connection refused") != std::string::npos) {
      std::puts("the job has ended (its master no longer answers).");
      return 0;
    }
  }
  if (!error.empty()) {
    // Only a refused connection means nothing listens there; a refused join (another job's
    // id, a wrong token) came from a running job.
    spdlog::error("cannot get the status from {}: {}{}", config.master, error,
                  error.find("Connection refused") != std::string::npos
                      ? " — no job is running there: it has ended (or not started yet), or --master names another port"
                      : "");
    return 1;
  }
  // The master's text: never raw to the terminal (JSON escapes every control character itself).
  std::fputs(json ? (text + "\n").c_str() : rendezvous::printable_lines(text).c_str(), stdout);
  return 0;
}

// `ddplaunch timeline`: the job's timeline as trace JSON and its HTML page, from the running
// job's master, or (--log-dir) from the timeline.json its master wrote there at the end.
int write_job_timeline(const LaunchConfig& config, bool from_log_dir) {
  std::string json;
  if (from_log_dir) {
    const std::string path = config.log_dir + "/" + kLogDirTraceName;
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file)
      return fail({fmt::format("cannot read {}: {} — the master writes it when a job run with --log-dir {} ends; for a "
                               "running job, leave out --log-dir",
                               path, std::strerror(errno), config.log_dir)});
    char buffer[65536];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) json.append(buffer, n);
    std::fclose(file);
  } else {
    auto endpoint = parse_host_port(config.master);
    if (!endpoint) return fail({"ddplaunch timeline needs --master HOST:PORT of the running job's rendezvous, or "
                                "--log-dir DIR of a finished one"});
    std::string error;
    json = rendezvous::query_master(endpoint->host, static_cast<std::uint16_t>(endpoint->port), config.job_id,
                                    config.token, kTimelineJsonQuery, std::chrono::seconds(10), error);
    if (!error.empty()) return fail({fmt::format("cannot get the timeline from {}: {}", config.master, error)});
    if (json.rfind("error: ", 0) == 0) return fail({fmt::format("the master at {} gave no timeline: {}", config.master,
                                                                rendezvous::printable(json.substr(7)))});
  }
  const TimelinePaths paths = timeline_paths_for(config.trace_file.empty() ? "timeline.json" : config.trace_file);
  if (std::string error = write_timeline(paths, json); !error.empty()) return fail({error + " (--trace FILE names it)"});
  std::printf("%s: Chrome trace JSON (open in Perfetto or chrome://tracing)\n%s: the timeline page (any browser)\n",
              paths.json.c_str(), paths.page.c_str());
  return 0;
}

// `ddplaunch tail --rank R`: that rank's last lines, then its lines as they come (relayed by
// the master from the rank's node; across restarts), until the job ends or Ctrl-C.
int follow_rank_output(const LaunchConfig& config, int rank) {
  if (rank < 0) return fail({"ddplaunch tail needs --rank R: the global rank whose output to follow"});
  auto endpoint = parse_host_port(config.master);
  if (!endpoint) return fail({"ddplaunch tail needs --master HOST:PORT of the running job's rendezvous"});
  const auto port = static_cast<std::uint16_t>(endpoint->port);
  TailRequest request{rank, -1};
  for (bool answered_once = false;; answered_once = true) {
    std::string error;
    const std::string text = rendezvous::query_master(endpoint->host, port, config.job_id, config.token,
                                                      encode_tail_request(request), std::chrono::seconds(5), error);
    if (!error.empty()) {
      if (answered_once && error.find("Connection refused") != std::string::npos) {
        std::fputs("ddplaunch tail: the job has ended (its master no longer answers)\n", stderr);
        return 0;
      }
      return fail({fmt::format("cannot follow rank {} at {}: {}", rank, config.master, error)});
    }
    const std::optional<TailReply> reply = decode_tail_reply(text);
    if (!reply) return fail({fmt::format("the master at {} gave an answer this ddplaunch cannot read (another version?)",
                                         config.master)});
    if (!reply->error.empty())
      return fail({fmt::format("the master at {} does not relay rank {}: {}", config.master, rank,
                               rendezvous::printable(reply->error))});
    if (reply->slice.missed > 0)
      std::fprintf(stdout, "[ddplaunch tail: %ld line(s) of rank %d went by before they could be shown]\n",
                   reply->slice.missed, rank);
    // Another launcher's text: never raw to the terminal.
    std::fputs(rendezvous::printable_lines(reply->slice.lines).c_str(), stdout);
    std::fflush(stdout);
    const bool more_waiting = reply->slice.next > request.from && !reply->slice.lines.empty() && request.from >= 0 &&
                              reply->slice.lines.size() >= RankTailRelay::kMaxReplyBytes / 2;
    request.from = reply->slice.next;
    if (!more_waiting) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// `ddplaunch debug`: the job's debug console from this terminal.
int open_debug_console(const LaunchConfig& config, int gdb_rank) {
  auto endpoint = parse_host_port(config.master);
  if (!endpoint) return fail({"ddplaunch debug needs --master HOST:PORT of the running job's rendezvous"});
  return run_remote_console(
      {endpoint->host, static_cast<std::uint16_t>(endpoint->port), config.job_id, config.token, gdb_rank});
}

// Whether the command line set `key` (a flag or --set), not a default or a hint.
bool given(const CommandLine& cl, std::string_view key) {
  return std::any_of(cl.settings.begin(), cl.settings.end(), [&](const auto& s) { return s.first == key; });
}

// `ddplaunch stacks`: ask the master to take every rank's stacks, then poll (bounded) for
// the grouped text.
int print_stacks(const LaunchConfig& config) {
  auto endpoint = parse_host_port(config.master);
  if (!endpoint) return fail({"ddplaunch stacks needs --master HOST:PORT of the running job's rendezvous"});
  const auto port = static_cast<std::uint16_t>(endpoint->port);
  std::string error;
  auto ask = [&](const StacksRequest& request) {
    return decode_stacks_reply(rendezvous::query_master(endpoint->host, port, config.job_id, config.token,
                                                        encode_stacks_request(request), std::chrono::seconds(5), error));
  };
  StacksReply reply = ask({});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);  // the master bounds a round at 6 s
  while (error.empty() && reply.kind == StacksReply::Kind::Pending && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    reply = ask({reply.round});
  }
  if (!error.empty()) {
    spdlog::error("cannot get the stacks from {}: {}", config.master, error);
    return 1;
  }
  if (reply.kind != StacksReply::Kind::Done) {
    spdlog::error("the master at {} gave no stacks: {}", config.master,
                  reply.kind == StacksReply::Kind::Pending ? "its nodes did not answer within 15 s"
                                                           : "error: " + reply.text);
    return 1;
  }
  std::fputs(rendezvous::printable_lines(reply.text).c_str(), stdout);
  return 0;
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
  planned.timeout_s = preflight::compute_init_deadline(config.timeout, config.nodes, false, 0, 0);
  planned.run_id = config.job_id;
  const NodeAssignment a = node_assignment(planned, plan, "(created at start)", "", 0);
  auto known = [](const std::string& v) { return v.empty() ? "unknown" : v.c_str(); };
  std::printf("# this node: %d GPU(s) (%s), driver %s, CUDA %s, NCCL %s\n# GPU notes: %s\n", gpus.count,
              gpus.source.c_str(), known(gpus.driver_version), known(gpus.cuda_version), known(gpus.nccl_version),
              gpus.note.c_str());
  std::printf("# timeout: %s\n", preflight::explain_init_deadline(config.timeout, config.nodes, false, 0, 0).c_str());
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
// reads the token as stdin's first line, never from argv. "" or the error.
std::string take_fanout_node_input(const CommandLine& cl, Environment& env) {
  if (!cl.fanout.exported.empty() || !cl.fanout.env_file.empty())
    return "-x/--export and --env-file pass variables to the hosts of --hosts/--hostfile; without them this "
           "ddplaunch's workers inherit this shell's environment: export the variable here instead";
  if (cl.token_stdin) {
    fanout::TokenLine line = fanout::read_token_line(STDIN_FILENO, std::chrono::seconds(30));
    if (!line.error.empty()) return line.error;
    env["DDPLAUNCH_TOKEN"] = line.token;
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
    auto record = choose_job_record(running_job_records(), given(cl, "job_id") ? config.job_id : "");
    if (!record) return fail({record.error});
    config.master = record->master;
    config.job_id = record->job_id;
    if (config.token.empty()) config.token = record->token;
  }
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
