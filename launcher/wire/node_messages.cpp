// The two fields of the node's messages that hold records of their own: a failure report and
// the ranks' states.
#include "wire/node_messages.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

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

namespace {
// " span wait [cpu]" where measured; -1 -1 before a CPU share without the shim's pair.
std::string measured_words(const RankReport& r) {
  const bool pair = r.span_ms >= 0 && r.wait_ms >= 0;
  if (!pair && r.cpu_millicores < 0) return "";
  std::string words = pair ? " " + std::to_string(r.span_ms) + " " + std::to_string(r.wait_ms) : " -1 -1";
  if (r.cpu_millicores >= 0) words += " " + std::to_string(r.cpu_millicores);
  return words;
}
}  // namespace

std::string RankLines::write(const std::vector<RankReport>& ranks) const {
  std::string lines;
  for (const auto& r : ranks)
    lines += std::to_string(r.rank) + " " + std::to_string(r.pid) + " " + std::string(rank_phase_name(r.phase)) + " " +
             std::to_string(r.init_entries) + " " + (r.state.empty() ? "-" : r.state) + " " + std::to_string(r.steps) +
             " " + std::to_string(r.max_interval_ms) + " " + std::to_string(r.progress_age_ms) + " " +
             (r.section.empty() ? "-" : r.section) +
             measured_words(r) + "\n";
  return lines;
}

namespace {
// The blank-separated words of one line, numbers read whole (a word that is not entirely a
// number is not one). No stream per line: the master reads a report from every node every
// period, thousands a second in a large job.
class LineWords {
 public:
  explicit LineWords(std::string_view line) : rest_(line) {}
  std::optional<std::string_view> next() {
    const std::size_t start = rest_.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) return std::nullopt;
    rest_.remove_prefix(start);
    const std::size_t end = std::min(rest_.find_first_of(" \t\r"), rest_.size());
    const std::string_view word = rest_.substr(0, end);
    rest_.remove_prefix(end);
    return word;
  }
  template <class Int>
  bool number(Int& value) {
    auto word = next();
    if (!word) return false;
    if (word->size() > 1 && word->front() == '+') word->remove_prefix(1);
    const auto [end, ec] = std::from_chars(word->data(), word->data() + word->size(), value);
    return ec == std::errc() && end == word->data() + word->size();
  }
  bool text(std::string& value) {
    auto word = next();
    if (word) value.assign(*word);
    return word.has_value();
  }
  // What is left of the line, from its next word on.
  std::string_view rest() const {
    const std::size_t start = rest_.find_first_not_of(" \t");
    return start == std::string_view::npos ? std::string_view() : rest_.substr(start);
  }

 private:
  std::string_view rest_;
};
}  // namespace

bool RankLines::read(const std::string* sent, std::vector<RankReport>& ranks) const {
  std::string_view all = sent ? std::string_view(*sent) : std::string_view();
  while (!all.empty()) {
    const std::size_t eol = std::min(all.find('\n'), all.size());
    LineWords words(all.substr(0, eol));
    all.remove_prefix(std::min(eol + 1, all.size()));
    RankReport r;
    std::string phase;
    long pid = 0;
    if (!(words.number(r.rank) && words.number(pid) && words.text(phase) && words.number(r.init_entries) &&
          words.text(r.state)))
      return false;
    if (words.number(r.steps) && words.number(r.max_interval_ms) && words.number(r.progress_age_ms) &&
        words.text(r.section)) {  // progress, when sent
      if (r.section == "-") r.section.clear();
      r.section = rendezvous::printable(r.section);
      if (r.steps < 0 || r.max_interval_ms < 0 || r.progress_age_ms < -1) return false;
      // What the shim measured, when sent; a pair that makes no sense is left out.
      long span = -1, wait = -1;
      if (words.number(span) && words.number(wait) && span >= 0 && wait >= 0 && wait <= span) {
        r.span_ms = span;
        r.wait_ms = wait;
      }
      long cpu = -1;  // the CPU share, when sent: at most a thousand cores
      if (words.number(cpu) && cpu >= 0 && cpu <= 1'000'000) r.cpu_millicores = cpu;
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

namespace {
using Share = std::optional<double> NodeSignals::*;
// The shares by their names on the wire, in the order they are written.
constexpr std::pair<const char*, Share> kShares[] = {
    {"steal", &NodeSignals::steal},
    {"cpu_pressure", &NodeSignals::cpu_pressure},
    {"memory_pressure", &NodeSignals::memory_pressure},
    {"io_pressure", &NodeSignals::io_pressure},
};
}  // namespace

std::string NodeSignalLines::write(const NodeSignals& signals) const {
  std::string lines;
  for (const auto& [name, share] : kShares)
    if (signals.*share) lines += fmt::format("{} {:.4f}\n", name, *(signals.*share));
  if (signals.throttled)
    lines += fmt::format("throttled {:.4f} {}\n", *signals.throttled,
                         rendezvous::printable(signals.throttled_cgroup).substr(0, kMaxCgroupBytes));
  return lines;
}

bool NodeSignalLines::read(const std::string* sent, NodeSignals& signals) const {
  std::string_view all = sent ? std::string_view(*sent) : std::string_view();
  while (!all.empty()) {
    const std::size_t eol = std::min(all.find('\n'), all.size());
    LineWords words(all.substr(0, eol));
    all.remove_prefix(std::min(eol + 1, all.size()));
    std::string name;
    double value = -1;
    if (!words.text(name) || !words.number(value) || !(value >= 0 && value <= 1)) continue;
    for (const auto& [known, share] : kShares)
      if (name == known) signals.*share = value;
    if (name == "throttled") {
      signals.throttled = value;
      signals.throttled_cgroup = rendezvous::printable(std::string(words.rest())).substr(0, kMaxCgroupBytes);
    }
  }
  return true;
}

}  // namespace ddplaunch::messages
