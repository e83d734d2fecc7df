// The two fields of the node's messages that hold records of their own: a failure report and
// the ranks' states.
#include "wire/node_messages.h"

#include <sstream>

#include "ddplaunch/rendezvous/printable.h"
#include "policy/failure_codec.h"
#include "wire/message_bounds.h"

namespace ddplaunch::messages {

std::string FailureReportText::write(const FailureReport& report) const {
  FailureReport bounded = report;
  bounded.failure.tail = bounded_tail(report.failure.tail);
  return encode_failure_report(bounded);
}

bool FailureReportText::read(const std::string* sent, FailureReport& report) const {
  std::string error;
  std::optional<FailureReport> r = decode_failure_report(sent ? *sent : "", error);
  if (!r) return false;
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
  report = std::move(*r);
  return true;
}

std::string RankLines::write(const std::vector<RankReport>& ranks) const {
  std::string lines;
  for (const auto& r : ranks)
    lines += std::to_string(r.rank) + " " + std::to_string(r.pid) + " " + std::string(rank_phase_name(r.phase)) + " " +
             std::to_string(r.init_entries) + " " + (r.state.empty() ? "-" : r.state) + " " + std::to_string(r.steps) +
             " " + std::to_string(r.max_interval_ms) + " " + std::to_string(r.progress_age_ms) + " " +
             (r.section.empty() ? "-" : r.section) +
             (r.span_ms >= 0 && r.wait_ms >= 0 ? " " + std::to_string(r.span_ms) + " " + std::to_string(r.wait_ms) : "") +
             "\n";
  return lines;
}

bool RankLines::read(const std::string* sent, std::vector<RankReport>& ranks) const {
  std::istringstream lines(sent ? *sent : "");
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    RankReport r;
    std::string phase;
    long pid = 0;
    if (!(words >> r.rank >> pid >> phase >> r.init_entries >> r.state)) return false;
    if (words >> r.steps >> r.max_interval_ms >> r.progress_age_ms >> r.section) {  // progress, when sent
      if (r.section == "-") r.section.clear();
      r.section = rendezvous::printable(r.section);
      if (r.steps < 0 || r.max_interval_ms < 0 || r.progress_age_ms < -1) return false;
      // What the shim measured, when sent; a pair that makes no sense is left out.
      long span = -1, wait = -1;
      if (words >> span >> wait && span >= 0 && wait >= 0 && wait <= span) {
        r.span_ms = span;
        r.wait_ms = wait;
      }
    } else {
      r.steps = r.max_interval_ms = 0;
      r.progress_age_ms = -1;
      r.section.clear();
    }
    auto parsed = rank_phase_from_name(phase);
    if (!parsed || r.rank < 0 || r.init_entries < 0) return false;
    r.pid = static_cast<pid_t>(pid);
    r.phase = *parsed;
    ranks.push_back(r);
  }
  return true;
}

}  // namespace ddplaunch::messages
