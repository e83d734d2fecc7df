// The job-inspecting subcommands: queries to the job's master, their answers on this terminal.
#include "inspect/job_inspection.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "master/rank_tail_relay.h"
#include "master/status_table.h"
#include "master/timeline_files.h"
#include "console/remote_console.h"
#include "ddplaunch/rendezvous/client.h"
#include "ddplaunch/rendezvous/printable.h"
#include "log_setup.h"
#include "policy/stacks_query.h"
#include "timeline/trace_json.h"

namespace ddplaunch {

namespace {
int fail(const std::vector<std::string>& errors) { return log_errors_and_refuse(errors); }

// A master that is shutting down can drop a query it had accepted; asked once more, it either
// answers or no longer listens (which the watching commands take as the job's end).
std::string ask_once_more_if_dropped(const std::function<std::string()>& ask, const rendezvous::QueryFailure& failure) {
  std::string text = ask();
  if (failure.kind != rendezvous::QueryFailure::Kind::Lost) return text;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return ask();
}
}  // namespace

std::string token_the_master_accepts(const LaunchConfig& config, const std::vector<std::string>& candidates) {
  auto endpoint = parse_host_port(config.master);
  if (!endpoint || candidates.empty()) return "";
  if (candidates.size() == 1) return candidates.front();  // nothing to choose: the command says if it is refused
  for (const std::string& token : candidates) {
    rendezvous::QueryFailure failure;
    rendezvous::query_status(endpoint->host, static_cast<std::uint16_t>(endpoint->port), config.job_id, token,
                             std::chrono::seconds(5), failure);
    if (failure.kind != rendezvous::QueryFailure::Kind::Refused) return token;
  }
  return "";
}

int print_status(const LaunchConfig& config, bool watch, bool json) {
  auto endpoint = parse_host_port(config.master);
  if (!endpoint) return fail({"ddplaunch status needs --master HOST:PORT of the running job's rendezvous"});
  rendezvous::QueryFailure failure;
  auto ask = [&] {
    const auto port = static_cast<std::uint16_t>(endpoint->port);
    return json ? rendezvous::query_master(endpoint->host, port, config.job_id, config.token, kStatusJsonQuery,
                                           std::chrono::seconds(5), failure)
                : rendezvous::query_status(endpoint->host, port, config.job_id, config.token, std::chrono::seconds(5),
                                           failure);
  };
  using FailureKind = rendezvous::QueryFailure::Kind;
  std::string text = ask();
  // --watch: the table again every second, in place on a terminal (a blank line between
  // tables otherwise), until the job has ended (its master is gone, or says so).
  const bool redraw = ::isatty(STDOUT_FILENO) == 1 && !json;
  for (bool shown_once = false; watch && !failure.failed(); shown_once = true) {
    const std::string table = json ? text + "\n" : rendezvous::printable_lines(text);
    std::fputs(redraw ? "\x1b[H\x1b[2J" : (shown_once && !json ? "\n" : ""), stdout);
    std::fputs(table.c_str(), stdout);
    std::fflush(stdout);
    if (table.find(json ? "\"phase\":\"Ended\"" : "the job has ended.") != std::string::npos) return 0;
    std::this_thread::sleep_for(std::chrono::seconds(1));
    text = ask_once_more_if_dropped(ask, failure);
    if (failure.kind == FailureKind::NothingListens) {
      std::puts("the job has ended (its master no longer answers).");
      return 0;
    }
  }
  if (failure.failed()) {
    // Only a refused connection means nothing listens there; a refused join (another job's
    // id, a wrong token) came from a running job.
    spdlog::error("cannot get the status from {}: {}{}", config.master, failure.text,
                  failure.kind == FailureKind::NothingListens
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
    rendezvous::QueryFailure failure;
    json = rendezvous::query_master(endpoint->host, static_cast<std::uint16_t>(endpoint->port), config.job_id,
                                    config.token, kTimelineJsonQuery, std::chrono::seconds(10), failure);
    if (failure.failed()) return fail({fmt::format("cannot get the timeline from {}: {}", config.master, failure.text)});
    if (json.rfind("error: ", 0) == 0) return fail({fmt::format("the master at {} gave no timeline: {}", config.master,
                                                                rendezvous::printable(json.substr(7)))});
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
// the master from the rank's node; across restarts), until the job ends or Ctrl-C.
int follow_rank_output(const LaunchConfig& config, int rank) {
  if (rank < 0) return fail({"ddplaunch tail needs --rank R: the global rank whose output to follow"});
  auto endpoint = parse_host_port(config.master);
  if (!endpoint) return fail({"ddplaunch tail needs --master HOST:PORT of the running job's rendezvous"});
  const auto port = static_cast<std::uint16_t>(endpoint->port);
  TailRequest request{rank, -1};
  for (bool answered_once = false;; answered_once = true) {
    rendezvous::QueryFailure failure;
    const std::string text = ask_once_more_if_dropped(
        [&] {
          return rendezvous::query_master(endpoint->host, port, config.job_id, config.token,
                                          encode_tail_request(request), std::chrono::seconds(5), failure);
        },
        failure);
    if (failure.failed()) {
      if (answered_once && failure.kind == rendezvous::QueryFailure::Kind::NothingListens) {
        std::fputs("ddplaunch tail: the job has ended (its master no longer answers)\n", stderr);
        return 0;
      }
      return fail({fmt::format("cannot follow rank {} at {}: {}", rank, config.master, failure.text)});
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

// `ddplaunch stacks`: ask the master to take every rank's stacks, then poll (bounded) for
// the grouped text.
int print_stacks(const LaunchConfig& config) {
  auto endpoint = parse_host_port(config.master);
  if (!endpoint) return fail({"ddplaunch stacks needs --master HOST:PORT of the running job's rendezvous"});
  const auto port = static_cast<std::uint16_t>(endpoint->port);
  rendezvous::QueryFailure failure;
  auto ask = [&](const StacksRequest& request) {
    return decode_stacks_reply(rendezvous::query_master(endpoint->host, port, config.job_id, config.token,
                                                        encode_stacks_request(request), std::chrono::seconds(5), failure));
  };
  StacksReply reply = ask({});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);  // the master bounds a round at 6 s
  while (!failure.failed() && reply.kind == StacksReply::Kind::Pending && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    reply = ask({reply.round});
  }
  if (failure.failed()) {
    spdlog::error("cannot get the stacks from {}: {}", config.master, failure.text);
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

}  // namespace ddplaunch
