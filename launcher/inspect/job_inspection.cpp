// The job-inspecting subcommands: typed queries to the job's master over one held connection
// (console_master_link.h), their typed answers on this terminal. A watching command ends on
// the answer's typed job standing, never on its prose; every failure is the link's one shape
// (a Result's error, and why for decisions).
#include "inspect/job_inspection.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "inspect/console_master_link.h"
#include "inspect/remote_console.h"
#include "timeline_files.h"
#include "ddplaunch/rendezvous/printable.h"
#include "log_setup.h"
#include "timeline/trace_json.h"

namespace ddplaunch {

namespace {
using Repeat = ConsoleMasterLink::Repeat;
using Failure = ConsoleMasterLink::Failure;

// How long a watching command's query may wait at the master for something new: the status
// table's clocks move every second; a followed rank or a stack round answers when it has news.
constexpr auto kStatusWait = std::chrono::seconds(1);
constexpr auto kNewsWait = std::chrono::seconds(5);

int fail(const std::vector<std::string>& errors) { return log_errors_and_refuse(errors); }

std::optional<RemoteConsoleTarget> target_of(const LaunchConfig& config, const std::string& token, int gdb_rank = -1) {
  auto endpoint = parse_host_port(config.master);
  if (!endpoint) return std::nullopt;
  return RemoteConsoleTarget{endpoint->host, static_cast<std::uint16_t>(endpoint->port), config.job_id, token, gdb_rank};
}

std::string needs_master(const char* command) {
  return fmt::format("ddplaunch {} needs --master HOST:PORT of the running job's rendezvous", command);
}

// The exit status that says how the job ended: its own (0 when it succeeded).
int exit_status_of(const JobStanding& job) { return job.end == JobEnd::Succeeded ? 0 : job.exit_status; }
}  // namespace

std::string token_the_master_accepts(const LaunchConfig& config, const std::vector<std::string>& candidates) {
  if (!parse_host_port(config.master) || candidates.empty()) return "";
  if (candidates.size() == 1) return candidates.front();  // nothing to choose: the command says if it is refused
  for (const std::string& token : candidates) {
    ConsoleMasterLink link(*target_of(config, token));
    link.ask(InspectionQuery{.ask = InspectionAsk::StatusTable, .line = {}}, Repeat::AfterAnyDrop);
    if (link.last_failure() != Failure::Refused) return token;
  }
  return "";
}

// `ddplaunch status`: the table (or --json) once; --watch: again whenever it changes (at least
// every second), in place on a terminal (a blank line between tables otherwise), over one
// connection, until the answer says the job has ended: then how, and the job's exit status.
int print_status(const LaunchConfig& config, bool watch, bool json) {
  const std::optional<RemoteConsoleTarget> target = target_of(config, config.token);
  if (!target) return fail({needs_master("status")});
  ConsoleMasterLink link(*target);
  const InspectionQuery query{.ask = json ? InspectionAsk::StatusJson : InspectionAsk::StatusTable, .line = {}};
  Result<InspectionReply> reply = link.ask(query, Repeat::AfterAnyDrop);
  if (!reply) {
    spdlog::error("cannot get the status from {}: {}{}", config.master, reply.error,
                  link.last_failure() == Failure::Unreachable
                      ? " — no job is running there: it has ended (or not started yet), or --master names another port"
                      : "");
    return 1;
  }
  const bool redraw = ::isatty(STDOUT_FILENO) == 1 && !json;
  for (bool shown_once = false;; shown_once = true) {
    // The master's text: never raw to the terminal (JSON escapes every control character itself).
    const std::string table = json ? reply->text + "\n" : rendezvous::printable_lines(reply->text);
    if (watch) std::fputs(redraw ? "\x1b[H\x1b[2J" : (shown_once && !json ? "\n" : ""), stdout);
    std::fputs(table.c_str(), stdout);
    std::fflush(stdout);
    if (!watch) return 0;
    if (reply->job.end != JobEnd::NotEnded) {
      const std::string end = rendezvous::printable(describe_job_end(reply->job)) + ".\n";
      std::fputs(end.c_str(), json ? stderr : stdout);
      return exit_status_of(reply->job);
    }
    reply = link.ask(query, Repeat::AfterAnyDrop, kStatusWait);
    if (!reply && link.last_failure() == Failure::Gone) {
      std::puts("the job has ended (its master no longer answers).");
      return 0;
    }
    if (!reply) {
      spdlog::error("cannot get the status from {}: {}", config.master, reply.error);
      return 1;
    }
  }
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
    const std::optional<RemoteConsoleTarget> target = target_of(config, config.token);
    if (!target) return fail({needs_master("timeline") + ", or --log-dir DIR of a finished one"});
    ConsoleMasterLink link(*target);
    const Result<InspectionReply> reply = link.ask(InspectionQuery{.ask = InspectionAsk::Timeline, .line = {}}, Repeat::AfterAnyDrop);
    if (!reply)
      return fail({fmt::format("{} {}: {}",
                               link.last_failure() == Failure::Refused ? "no timeline from the master at"
                                                                       : "cannot get the timeline from",
                               config.master, reply.error)});
    json = reply->text;
  }
  // What came is written (and put in the page's script) only as JSON, parsed and written again.
  const std::optional<std::string> trace = timeline::reserialized_trace(json);
  if (!trace)
    return fail({fmt::format(
        "{} is not a JSON trace ('{:.60}'): nothing written — {}",
        from_log_dir ? config.log_dir + "/" + kLogDirTraceName : "the answer of the master at " + config.master,
        rendezvous::printable(json),
        from_log_dir ? "a job's master writes that file as JSON: it was changed since"
                     : "is that a ddplaunch master of this version, and the job you meant?")});
  const TimelinePaths paths = timeline_paths_for(config.trace_file.empty() ? "timeline.json" : config.trace_file);
  if (std::string error = write_timeline(paths, *trace); !error.empty()) return fail({error + " (--trace FILE names it)"});
  std::printf("%s: Chrome trace JSON (open in Perfetto or chrome://tracing)\n%s: the timeline page (any browser)\n",
              paths.json.c_str(), paths.page.c_str());
  return 0;
}

// `ddplaunch tail --rank R`: that rank's last lines, then its lines as they come (relayed by
// the master from the rank's node; across restarts; each ask waits at the master for new
// lines), until the job ends or Ctrl-C.
int follow_rank_output(const LaunchConfig& config, int rank) {
  if (rank < 0) return fail({"ddplaunch tail needs --rank R: the global rank whose output to follow"});
  const std::optional<RemoteConsoleTarget> target = target_of(config, config.token);
  if (!target) return fail({needs_master("tail")});
  ConsoleMasterLink link(*target);
  InspectionQuery query{InspectionAsk::Tail, rank, -1, ""};
  for (bool answered_once = false;; answered_once = true) {
    // A query asked again (nothing new came) waits at the master for the rank's next lines.
    const Result<InspectionReply> reply = link.ask(query, Repeat::AfterAnyDrop, kNewsWait);
    if (!reply) {
      if (answered_once && link.last_failure() == Failure::Gone) {
        std::fputs("ddplaunch tail: the job has ended (its master no longer answers)\n", stderr);
        return 0;
      }
      if (link.last_failure() == Failure::Refused)
        return fail({fmt::format("the master at {} does not relay rank {}: {}", config.master, rank, reply.error)});
      return fail({fmt::format("cannot follow rank {} at {}: {}", rank, config.master, reply.error)});
    }
    if (reply->missed > 0)
      std::fprintf(stdout, "[ddplaunch tail: %ld line(s) of rank %d went by before they could be shown]\n",
                   reply->missed, rank);
    // Another launcher's text: never raw to the terminal.
    std::fputs(rendezvous::printable_lines(reply->text).c_str(), stdout);
    std::fflush(stdout);
    if (reply->job.end != JobEnd::NotEnded && reply->next == query.from) {  // ended, and nothing more came
      std::fprintf(stderr, "ddplaunch tail: %s\n", rendezvous::printable(describe_job_end(reply->job)).c_str());
      return 0;
    }
    query.from = reply->next;
  }
}

// `ddplaunch debug`: the job's debug console from this terminal.
int open_debug_console(const LaunchConfig& config, int gdb_rank) {
  const std::optional<RemoteConsoleTarget> target = target_of(config, config.token, gdb_rank);
  if (!target) return fail({needs_master("debug")});
  return run_remote_console(*target);
}

// `ddplaunch stacks`: ask the master to take every rank's stacks, then for that round's stacks
// (each ask waits at the master until the round is done; bounded).
int print_stacks(const LaunchConfig& config) {
  const std::optional<RemoteConsoleTarget> target = target_of(config, config.token);
  if (!target) return fail({needs_master("stacks")});
  ConsoleMasterLink link(*target);
  Result<InspectionReply> reply = link.ask({InspectionAsk::Stacks, -1, -1, ""}, Repeat::AfterAnyDrop);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);  // the master bounds a round at 6 s
  while (reply && reply->kind == ReplyKind::Pending && std::chrono::steady_clock::now() < deadline)
    reply = link.ask({InspectionAsk::Stacks, -1, reply->next, ""}, Repeat::AfterAnyDrop, kNewsWait);
  if (!reply) {
    spdlog::error("{} {}: {}",
                  link.last_failure() == Failure::Refused ? "the master gave no stacks at" : "cannot get the stacks from",
                  config.master, reply.error);
    return 1;
  }
  if (reply->kind != ReplyKind::Answer) {
    spdlog::error("the master at {} gave no stacks: its nodes did not answer within 15 s", config.master);
    return 1;
  }
  std::fputs(rendezvous::printable_lines(reply->text).c_str(), stdout);
  return 0;
}

}  // namespace ddplaunch
