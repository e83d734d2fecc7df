// Codec of launcher messages: typed payloads ↔ rendezvous::Message fields.
#include "agent/launcher_messages.h"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <utility>

#include "agent/message_bounds.h"
#include "ddplaunch/rendezvous/printable.h"
#include "ddplaunch/rendezvous/token_proof.h"
#include "policy/failure_codec.h"
#include "ddplaunch/base/index_list.h"
#include "ddplaunch/base/name_table.h"
#include "timeline/timeline_wire.h"

namespace ddplaunch::messages {

namespace {
constexpr NameTable<Kind, 23> kKindNames{{{
    {Kind::WorkerFailed, "worker_failed"},
    {Kind::NodeFinished, "node_finished"},
    {Kind::NodeProblem, "node_problem"},
    {Kind::NodeReport, "node_report"},
    {Kind::RankStates, "rank_states"},
    {Kind::Restart, "restart"},
    {Kind::Stop, "stop"},
    {Kind::JobEnd, "job_end"},
    {Kind::Resume, "resume"},
    {Kind::ProbeResults, "probe_results"},
    {Kind::ProbeVerdict, "probe_verdict"},
    {Kind::Standby, "standby"},
    {Kind::CollectStacks, "collect_stacks"},
    {Kind::RankStacks, "rank_stacks"},
    {Kind::DebugStopped, "debug_stopped"},
    {Kind::DebugOutput, "debug_output"},
    {Kind::DebugResumed, "debug_resumed"},
    {Kind::DebugInput, "debug_input"},
    {Kind::DebugAttachGdb, "debug_attach_gdb"},
    {Kind::TimelineEvents, "timeline_events"},
    {Kind::OutputFilter, "output_filter"},
    {Kind::FollowRank, "follow_rank"},
    {Kind::RankOutput, "rank_output"},
}}};

rendezvous::Message make(Kind kind, long generation, std::vector<std::pair<std::string, std::string>> fields) {
  rendezvous::Message m;
  m.type = std::string(kind_name(kind));
  m.generation = static_cast<std::uint64_t>(generation);
  for (auto& [k, v] : fields) m.fields[k] = std::move(v);
  fit_for_wire(m);  // whatever a payload holds, the message stays under the frame limit
  return m;
}

std::string field(const rendezvous::Message& m, const std::string& key, const std::string& fallback = "") {
  auto it = m.fields.find(key);
  return it == m.fields.end() ? fallback : it->second;
}

// Free text another launcher sent is printed on this terminal: control characters and escape
// sequences become visible escapes (rendezvous/printable.h), so a peer can neither drive the
// terminal nor forge a log line. text_field: one line; lines_field: its lines kept apart.
std::string text_field(const rendezvous::Message& m, const std::string& key, const std::string& fallback = "") {
  return rendezvous::printable(field(m, key, fallback));
}
std::string lines_field(const rendezvous::Message& m, const std::string& key, const std::string& fallback = "") {
  return rendezvous::printable_lines(field(m, key, fallback));
}

// Free text logged as one entry (a reason, a problem): its lines made printable and every line
// after the first indented, so that none can pass for a log line of this launcher.
std::string entry_field(const rendezvous::Message& m, const std::string& key, const std::string& fallback = "") {
  std::string out = lines_field(m, key, fallback);
  for (std::size_t at = out.find('\n'); at != std::string::npos; at = out.find('\n', at + 1)) out.insert(at + 1, "    ");
  return out;
}

std::optional<long> long_field(const rendezvous::Message& m, const std::string& key) {
  auto it = m.fields.find(key);
  if (it == m.fields.end()) return std::nullopt;
  long value = 0;
  const std::string& text = it->second;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

int int_field(const rendezvous::Message& m, const std::string& key, int fallback) {
  auto v = long_field(m, key);
  return v && *v >= -(1L << 30) && *v <= (1L << 30) ? static_cast<int>(*v) : fallback;
}

bool is(const rendezvous::Message& m, Kind kind) { return kind_of(m) == kind; }
}  // namespace

std::string_view kind_name(Kind kind) { return kKindNames.name(kind); }
std::optional<Kind> kind_of(const rendezvous::Message& m) { return kKindNames.parse(m.type); }

// The report in one field, written by its one codec (the policy state's too).
rendezvous::Message encode(long generation, const FailureReport& r) {
  FailureReport bounded = r;
  bounded.failure.tail = bounded_tail(r.failure.tail);
  return make(Kind::WorkerFailed, generation, {{"report", encode_failure_report(bounded)}});
}

std::optional<FailureReport> decode_failure(const rendezvous::Message& m) {
  if (!is(m, Kind::WorkerFailed)) return std::nullopt;
  std::string error;
  std::optional<FailureReport> r = decode_failure_report(field(m, "report"), error);
  if (!r) return std::nullopt;
  // What another launcher sent is printed here: made printable and bounded as ours.
  r->host = rendezvous::printable(r->host);
  WorkerFailure& f = r->failure;
  f.detail = rendezvous::printable_lines(f.detail);
  f.init_signature = rendezvous::printable(f.init_signature);
  f.log_file = rendezvous::printable(f.log_file);
  std::deque<std::string> tail;
  for (const auto& line : f.tail) {  // a line with line breaks in it is more than one line
    const std::string clean = rendezvous::printable_lines(line);
    for (std::size_t start = 0;;) {
      const std::size_t end = clean.find('\n', start);
      tail.push_back(clean.substr(start, end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  f.tail = bounded_tail(tail);
  return r;
}

rendezvous::Message encode(long generation, const NodeFinished& p) {
  return make(Kind::NodeFinished, generation, {{"exit_code", std::to_string(p.exit_code)}, {"summary", p.summary}});
}
std::optional<NodeFinished> decode_node_finished(const rendezvous::Message& m) {
  if (!is(m, Kind::NodeFinished)) return std::nullopt;
  return NodeFinished{int_field(m, "exit_code", 1), lines_field(m, "summary")};
}

rendezvous::Message encode(long generation, const NodeProblem& p) {
  return make(Kind::NodeProblem, generation, {{"message", p.message}, {"exit_code", std::to_string(p.exit_code)}});
}
std::optional<NodeProblem> decode_node_problem(const rendezvous::Message& m) {
  if (!is(m, Kind::NodeProblem)) return std::nullopt;
  return NodeProblem{entry_field(m, "message", "unspecified problem"), int_field(m, "exit_code", 1)};
}

rendezvous::Message encode(long generation, const NodeReport& p) {
  return make(Kind::NodeReport, generation,
              {{"ok", p.ok ? "1" : "0"}, {"nic", p.nic.empty() ? "-" : p.nic}, {"problems", p.problems}});
}
std::optional<NodeReport> decode_node_report(const rendezvous::Message& m) {
  if (!is(m, Kind::NodeReport)) return std::nullopt;
  return NodeReport{field(m, "ok") == "1", text_field(m, "nic", "-"), lines_field(m, "problems")};
}

// One line per rank: "rank pid phase init_entries state steps max_interval_ms progress_age_ms
// section" (the last four: progress, for hang detection; a section name is one word, "-" for none).
rendezvous::Message encode(long generation, const RankStates& p) {
  std::string lines;
  for (const auto& r : p.ranks)
    lines += std::to_string(r.rank) + " " + std::to_string(r.pid) + " " + std::string(rank_phase_name(r.phase)) + " " +
             std::to_string(r.init_entries) + " " + (r.state.empty() ? "-" : r.state) + " " + std::to_string(r.steps) +
             " " + std::to_string(r.max_interval_ms) + " " + std::to_string(r.progress_age_ms) + " " +
             (r.section.empty() ? "-" : r.section) + "\n";
  return make(Kind::RankStates, generation, {{"host", p.host}, {"ranks", lines}, {"log_dir", p.log_dir}});
}
std::optional<RankStates> decode_rank_states(const rendezvous::Message& m) {
  if (!is(m, Kind::RankStates)) return std::nullopt;
  RankStates p;
  p.host = text_field(m, "host", "?");
  p.log_dir = text_field(m, "log_dir");
  std::istringstream lines(field(m, "ranks"));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    RankReport r;
    std::string phase;
    long pid = 0;
    if (!(words >> r.rank >> pid >> phase >> r.init_entries >> r.state)) return std::nullopt;
    if (words >> r.steps >> r.max_interval_ms >> r.progress_age_ms >> r.section) {  // progress, when sent
      if (r.section == "-") r.section.clear();
      r.section = rendezvous::printable(r.section);
      if (r.steps < 0 || r.max_interval_ms < 0 || r.progress_age_ms < -1) return std::nullopt;
    } else {
      r.steps = r.max_interval_ms = 0;
      r.progress_age_ms = -1;
      r.section.clear();
    }
    auto parsed = rank_phase_from_name(phase);
    if (!parsed || r.rank < 0 || r.init_entries < 0) return std::nullopt;
    r.pid = static_cast<pid_t>(pid);
    r.phase = *parsed;
    p.ranks.push_back(r);
  }
  return p;
}

rendezvous::Message encode(long generation, const Restart& p) {
  return make(Kind::Restart, generation, {{"reason", p.reason}});
}
std::optional<Restart> decode_restart(const rendezvous::Message& m) {
  if (!is(m, Kind::Restart)) return std::nullopt;
  return Restart{entry_field(m, "reason")};
}

rendezvous::Message encode(long generation, const Stop& p) {
  return make(Kind::Stop, generation, {{"reason", p.reason}, {"exit_code", std::to_string(p.exit_code)}});
}
std::optional<Stop> decode_stop(const rendezvous::Message& m) {
  if (!is(m, Kind::Stop)) return std::nullopt;
  return Stop{entry_field(m, "reason"), int_field(m, "exit_code", 1)};
}

rendezvous::Message encode(long generation, const JobEnd& p) {
  return make(Kind::JobEnd, generation, {{"exit_code", std::to_string(p.exit_code)}});
}
std::optional<JobEnd> decode_job_end(const rendezvous::Message& m) {
  if (!is(m, Kind::JobEnd)) return std::nullopt;
  return JobEnd{int_field(m, "exit_code", 1)};
}

rendezvous::Message encode_resume(long generation) { return make(Kind::Resume, generation, {}); }

// One line per link, tab-separated: from to ifname source destination ok rtt_ms mbit error.
rendezvous::Message encode(long generation, const ProbeResults& p) {
  std::string lines;
  for (std::size_t i = 0; i < p.links.size() && i < kMaxProbeLinks; ++i) {
    const auto& l = p.links[i];
    std::string error = l.result.error.substr(0, 300);
    for (char& c : error)
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    lines += std::to_string(l.pair.from) + "\t" + std::to_string(l.pair.to) + "\t" + l.ifname + "\t" + l.from_address +
             "\t" + l.to_endpoint + "\t" + (l.result.ok ? "1" : "0") + "\t" + std::to_string(l.result.rtt_ms) + "\t" +
             std::to_string(l.result.mbit_per_s) + "\t" + error + "\n";
  }
  return make(Kind::ProbeResults, generation, {{"links", lines}});
}

std::optional<ProbeResults> decode_probe_results(const rendezvous::Message& m) {
  if (!is(m, Kind::ProbeResults)) return std::nullopt;
  ProbeResults p;
  std::istringstream lines(field(m, "links"));
  for (std::string line; std::getline(lines, line);) {
    if (p.links.size() >= kMaxProbeLinks) return std::nullopt;
    std::vector<std::string> parts;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) parts.push_back(cell);
    if (parts.size() == 8) parts.emplace_back();  // an empty error at the end of the line
    if (parts.size() != 9) return std::nullopt;
    preflight::ProbedLink l;
    try {
      l.pair.from = std::stoi(parts[0]);
      l.pair.to = std::stoi(parts[1]);
      l.result.rtt_ms = std::stod(parts[6]);
      l.result.mbit_per_s = std::stod(parts[7]);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (l.pair.from < 0 || l.pair.to < 0 || parts[2].empty() || parts[2].size() > 15) return std::nullopt;
    l.ifname = parts[2];
    l.from_address = parts[3];
    l.to_endpoint = parts[4];
    l.result.ok = parts[5] == "1";
    l.result.error = parts[8];
    p.links.push_back(std::move(l));
  }
  return p;
}

rendezvous::Message encode(long generation, const ProbeVerdict& p) {
  return make(Kind::ProbeVerdict, generation, {{"ifname", p.ifname}});
}
std::optional<ProbeVerdict> decode_probe_verdict(const rendezvous::Message& m) {
  if (!is(m, Kind::ProbeVerdict)) return std::nullopt;
  return ProbeVerdict{text_field(m, "ifname")};
}

rendezvous::Message encode(long generation, const Standby& p) {
  return make(Kind::Standby, generation, {{"reason", p.reason}, {"run", p.run_nonce}});
}
std::optional<Standby> decode_standby(const rendezvous::Message& m) {
  if (!is(m, Kind::Standby)) return std::nullopt;
  std::string run = field(m, "run");
  return Standby{entry_field(m, "reason"), rendezvous::is_run_nonce(run) ? run : ""};
}

std::vector<std::vector<timeline::Event>> timeline_batches(std::vector<timeline::Event> events) {
  std::vector<std::vector<timeline::Event>> batches(1);
  std::size_t bytes = 0;
  for (auto& e : events) {
    const std::size_t size = timeline::encode_events({e}).size();
    if (!batches.back().empty() &&
        (bytes + size > kMaxTimelineBatchBytes || batches.back().size() == timeline::kMaxEventsPerMessage)) {
      batches.emplace_back();
      bytes = 0;
    }
    bytes += size;
    batches.back().push_back(std::move(e));
  }
  if (batches.back().empty()) batches.pop_back();
  return batches;
}

rendezvous::Message encode(long generation, const TimelineEvents& p) {
  return make(Kind::TimelineEvents, generation,
              {{"sent_at_us", std::to_string(p.sent_at_us)}, {"events", timeline::encode_events(p.events)}});
}
std::optional<TimelineEvents> decode_timeline_events(const rendezvous::Message& m) {
  if (!is(m, Kind::TimelineEvents)) return std::nullopt;
  auto sent_at = long_field(m, "sent_at_us");
  auto events = timeline::decode_events(field(m, "events"));
  if (!sent_at || !events) return std::nullopt;
  for (auto& e : *events) {  // another launcher's text: made printable once, here
    e.name = rendezvous::printable(e.name);
    e.category = rendezvous::printable(e.category);
    e.detail = rendezvous::printable(e.detail);
  }
  return TimelineEvents{*sent_at, std::move(*events)};
}

namespace {
constexpr int kMaxListedRank = 1 << 22;  // far above any world size
}

rendezvous::Message encode(long generation, const OutputFilter& p) {
  return make(Kind::OutputFilter, generation, {{"ranks", format_index_list(p.ranks)}});
}
std::optional<OutputFilter> decode_output_filter(const rendezvous::Message& m) {
  if (!is(m, Kind::OutputFilter)) return std::nullopt;
  const std::string ranks = field(m, "ranks");
  if (ranks.empty()) return OutputFilter{};
  auto parsed = parse_index_list(ranks, kMaxListedRank);
  if (!parsed) return std::nullopt;
  return OutputFilter{std::move(*parsed)};
}

rendezvous::Message encode(long generation, const FollowRank& p) {
  return make(Kind::FollowRank, generation, {{"rank", std::to_string(p.rank)}, {"seconds", std::to_string(p.seconds)}});
}
std::optional<FollowRank> decode_follow_rank(const rendezvous::Message& m) {
  if (!is(m, Kind::FollowRank)) return std::nullopt;
  FollowRank p{int_field(m, "rank", -1), int_field(m, "seconds", -1)};
  if (p.rank < 0 || p.seconds < 0 || p.seconds > 3600) return std::nullopt;
  return p;
}

rendezvous::Message encode(long generation, const RankOutput& p) {
  return make(Kind::RankOutput, generation,
              {{"rank", std::to_string(p.rank)}, {"lines", cut_middle(p.lines, kMaxRankOutputBytes)},
               {"dropped", std::to_string(p.dropped)}});
}
std::optional<RankOutput> decode_rank_output(const rendezvous::Message& m) {
  if (!is(m, Kind::RankOutput)) return std::nullopt;
  RankOutput p{int_field(m, "rank", -1), lines_field(m, "lines"), long_field(m, "dropped").value_or(0)};
  if (p.rank < 0 || p.dropped < 0) return std::nullopt;
  return p;
}

rendezvous::Message encode(long generation, const CollectStacks& p) {
  return make(Kind::CollectStacks, generation, {{"request", std::to_string(p.request)}});
}
std::optional<CollectStacks> decode_collect_stacks(const rendezvous::Message& m) {
  if (!is(m, Kind::CollectStacks)) return std::nullopt;
  auto request = long_field(m, "request");
  if (!request) return std::nullopt;
  return CollectStacks{*request};
}

// Per rank i: rank.i, pid.i, source.i, text.i (each text cut to kMaxStackBytes first; the
// whole message is then fitted like any other).
rendezvous::Message encode(long generation, const RankStacksReply& p) {
  std::vector<std::pair<std::string, std::string>> fields{{"request", std::to_string(p.request)}, {"host", p.host}};
  const std::size_t count = std::min(p.stacks.size(), kMaxStacksPerMessage);
  fields.emplace_back("count", std::to_string(count));
  for (std::size_t i = 0; i < count; ++i) {
    const RankStack& s = p.stacks[i];
    const std::string n = std::to_string(i);
    fields.emplace_back("rank." + n, std::to_string(s.rank));
    fields.emplace_back("pid." + n, std::to_string(s.pid));
    fields.emplace_back("source." + n, s.source.substr(0, 16));
    fields.emplace_back("text." + n, cut_middle(s.text, kMaxStackBytes));
  }
  return make(Kind::RankStacks, generation, std::move(fields));
}
std::optional<RankStacksReply> decode_rank_stacks(const rendezvous::Message& m) {
  if (!is(m, Kind::RankStacks)) return std::nullopt;
  RankStacksReply p;
  auto request = long_field(m, "request");
  auto count = long_field(m, "count");
  if (!request || !count || *count < 0 || static_cast<std::size_t>(*count) > kMaxStacksPerMessage) return std::nullopt;
  p.request = *request;
  p.host = text_field(m, "host", "?");
  for (long i = 0; i < *count; ++i) {
    const std::string n = std::to_string(i);
    RankStack s;
    s.rank = int_field(m, "rank." + n, -1);
    if (s.rank < 0) return std::nullopt;
    s.pid = long_field(m, "pid." + n).value_or(0);
    s.source = text_field(m, "source." + n, "?");
    s.text = cut_middle(lines_field(m, "text." + n), kMaxStackBytes);
    p.stacks.push_back(std::move(s));
  }
  return p;
}

rendezvous::Message encode(long generation, const DebugStopped& p) {
  return make(Kind::DebugStopped, generation,
              {{"rank", std::to_string(p.rank)},
               {"local_rank", std::to_string(p.local_rank)},
               {"pid", std::to_string(p.pid)},
               {"host", p.host},
               {"file", p.file},
               {"line", std::to_string(p.line)},
               {"function", p.function},
               {"code", p.code},
               {"reason", p.reason}});
}
std::optional<DebugStopped> decode_debug_stopped(const rendezvous::Message& m) {
  if (!is(m, Kind::DebugStopped)) return std::nullopt;
  DebugStopped p;
  p.rank = int_field(m, "rank", -1);
  if (p.rank < 0) return std::nullopt;
  p.local_rank = int_field(m, "local_rank", -1);
  p.pid = int_field(m, "pid", 0);
  p.host = text_field(m, "host", "?");
  p.file = text_field(m, "file", "?");
  p.line = int_field(m, "line", 0);
  p.function = text_field(m, "function", "?");
  p.code = text_field(m, "code");
  p.reason = text_field(m, "reason");
  return p;
}

rendezvous::Message encode(long generation, const DebugOutput& p) {
  return make(Kind::DebugOutput, generation,
              {{"rank", std::to_string(p.rank)}, {"lines", cut_middle(p.lines, kMaxDebugOutputBytes)},
               {"prompt", p.prompt ? "1" : "0"}});
}
std::optional<DebugOutput> decode_debug_output(const rendezvous::Message& m) {
  if (!is(m, Kind::DebugOutput)) return std::nullopt;
  DebugOutput p;
  p.rank = int_field(m, "rank", -1);
  if (p.rank < 0) return std::nullopt;
  p.lines = lines_field(m, "lines");
  if (!p.lines.empty() && p.lines.back() != '\n') p.lines += '\n';
  p.prompt = field(m, "prompt") == "1";
  return p;
}

rendezvous::Message encode(long generation, const DebugResumed& p) {
  return make(Kind::DebugResumed, generation, {{"rank", std::to_string(p.rank)}});
}
std::optional<DebugResumed> decode_debug_resumed(const rendezvous::Message& m) {
  if (!is(m, Kind::DebugResumed)) return std::nullopt;
  DebugResumed p;
  p.rank = int_field(m, "rank", -1);
  if (p.rank < 0) return std::nullopt;
  return p;
}

// The line goes to a debugger as typed: one line, no newline inside (it would be a second command).
rendezvous::Message encode(long generation, const DebugInput& p) {
  return make(Kind::DebugInput, generation,
              {{"rank", std::to_string(p.rank)}, {"line", cut_middle(p.line.substr(0, p.line.find('\n')), 4096)}});
}
std::optional<DebugInput> decode_debug_input(const rendezvous::Message& m) {
  if (!is(m, Kind::DebugInput)) return std::nullopt;
  DebugInput p;
  p.rank = int_field(m, "rank", -1);
  p.line = field(m, "line");
  if (p.rank < 0 || p.line.find('\n') != std::string::npos) return std::nullopt;
  return p;
}

rendezvous::Message encode(long generation, const DebugAttachGdb& p) {
  return make(Kind::DebugAttachGdb, generation, {{"rank", std::to_string(p.rank)}});
}
std::optional<DebugAttachGdb> decode_debug_attach_gdb(const rendezvous::Message& m) {
  if (!is(m, Kind::DebugAttachGdb)) return std::nullopt;
  DebugAttachGdb p;
  p.rank = int_field(m, "rank", -1);
  if (p.rank < 0) return std::nullopt;
  return p;
}

}  // namespace ddplaunch::messages
