// Codec of the node's reports and the master's orders.
#include "wire/node_messages.h"

#include <sstream>

#include "wire/message_bounds.h"
#include "wire/message_fields.h"
#include "ddplaunch/rendezvous/printable.h"
#include "ddplaunch/rendezvous/token_proof.h"
#include "policy/failure_codec.h"

namespace ddplaunch::messages {

// The report in one field, written by its one codec (the policy state's too).
rendezvous::Message encode(Generation generation, const FailureReport& r) {
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

rendezvous::Message encode(Generation generation, const NodeFinished& p) {
  return make(Kind::NodeFinished, generation, {{"exit_code", std::to_string(p.exit_code)}, {"summary", p.summary}});
}
std::optional<NodeFinished> decode_node_finished(const rendezvous::Message& m) {
  if (!is(m, Kind::NodeFinished)) return std::nullopt;
  return NodeFinished{int_field(m, "exit_code", 1), lines_field(m, "summary")};
}

rendezvous::Message encode(Generation generation, const NodeProblem& p) {
  return make(Kind::NodeProblem, generation, {{"message", p.message}, {"exit_code", std::to_string(p.exit_code)}});
}
std::optional<NodeProblem> decode_node_problem(const rendezvous::Message& m) {
  if (!is(m, Kind::NodeProblem)) return std::nullopt;
  return NodeProblem{entry_field(m, "message", "unspecified problem"), int_field(m, "exit_code", 1)};
}

rendezvous::Message encode(Generation generation, const NodeReport& p) {
  return make(Kind::NodeReport, generation,
              {{"ok", p.ok ? "1" : "0"}, {"nic", p.nic.empty() ? "-" : p.nic}, {"problems", p.problems}});
}
std::optional<NodeReport> decode_node_report(const rendezvous::Message& m) {
  if (!is(m, Kind::NodeReport)) return std::nullopt;
  return NodeReport{field(m, "ok") == "1", text_field(m, "nic", "-"), lines_field(m, "problems")};
}

// One line per rank: "rank pid phase init_entries state steps max_interval_ms progress_age_ms
// section" (the last four: progress, for hang detection; a section name is one word, "-" for none).
rendezvous::Message encode(Generation generation, const RankStates& p) {
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

rendezvous::Message encode(Generation generation, const Restart& p) {
  return make(Kind::Restart, generation, {{"reason", p.reason}});
}
std::optional<Restart> decode_restart(const rendezvous::Message& m) {
  if (!is(m, Kind::Restart)) return std::nullopt;
  return Restart{entry_field(m, "reason")};
}

rendezvous::Message encode(Generation generation, const Stop& p) {
  return make(Kind::Stop, generation, {{"reason", p.reason}, {"exit_code", std::to_string(p.exit_code)}});
}
std::optional<Stop> decode_stop(const rendezvous::Message& m) {
  if (!is(m, Kind::Stop)) return std::nullopt;
  return Stop{entry_field(m, "reason"), int_field(m, "exit_code", 1)};
}

rendezvous::Message encode(Generation generation, const JobEnd& p) {
  return make(Kind::JobEnd, generation, {{"exit_code", std::to_string(p.exit_code)}});
}
std::optional<JobEnd> decode_job_end(const rendezvous::Message& m) {
  if (!is(m, Kind::JobEnd)) return std::nullopt;
  return JobEnd{int_field(m, "exit_code", 1)};
}

rendezvous::Message encode_resume(Generation generation) { return make(Kind::Resume, generation, {}); }

rendezvous::Message encode(Generation generation, const Standby& p) {
  return make(Kind::Standby, generation, {{"reason", p.reason}, {"run", p.run_nonce}});
}
std::optional<Standby> decode_standby(const rendezvous::Message& m) {
  if (!is(m, Kind::Standby)) return std::nullopt;
  std::string run = field(m, "run");
  return Standby{entry_field(m, "reason"), rendezvous::is_run_nonce(run) ? run : ""};
}

}  // namespace ddplaunch::messages
