// A worker's training progress from its shim's step and section reports: the node
// keeps the count, the longest recent interval and the open section; the master judges
// from the rank reports made of them.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "supervise/progress_record.h"
#include "supervise/proc_status.h"

namespace ddplaunch {

namespace {
constexpr std::size_t kMaxSectionNameBytes = 64;  // a name from a worker: bounded, one word

std::string section_name(std::string_view text) {
  std::string name(text.substr(0, kMaxSectionNameBytes));
  for (char& c : name)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') c = '_';
  return name.empty() ? std::string("section") : name;
}
}  // namespace

bool record_progress(Worker& worker, const contract::StatusMessage& m) {
  WorkerProgress& w = worker.progress;
  const auto now = std::chrono::steady_clock::now();
  switch (m.event) {
    case contract::StatusEvent::Step: {
      auto progress = contract::parse_step_detail(m.detail);
      if (!progress || progress->steps <= w.steps_) return false;  // stale or garbage: not progress
      w.steps_ = progress->steps;
      w.recent_max_interval_ms_ = std::max(w.recent_max_interval_ms_, progress->max_interval_ms);
      if (progress->span_ms >= 0) {
        w.recent_span_ms_ = std::max(w.recent_span_ms_, 0L) + progress->span_ms;
        w.recent_wait_ms_ = std::max(w.recent_wait_ms_, 0L) + progress->wait_ms;
      }
      w.last_progress_ = now;
      return false;
    }
    case contract::StatusEvent::SectionBegin:
      w.section_ = section_name(m.detail);
      w.last_progress_ = now;
      return true;
    case contract::StatusEvent::SectionEnd:
      if (w.section_.empty()) return false;
      w.section_.clear();
      w.last_progress_ = now;
      return true;
    default:
      return false;
  }
}

bool traced_by_a_person(pid_t pid) {
  if (pid <= 0) return false;
  const long tracer = std::strtol(proc_status_field(pid, "TracerPid").c_str(), nullptr, 10);
  if (tracer <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(tracer) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t close = text.rfind(')');
  long parent = 0;
  if (close != std::string::npos && close + 4 < text.size()) parent = std::strtol(text.c_str() + close + 4, nullptr, 10);
  return parent != static_cast<long>(::getpid());
}

RankReport rank_report_of(Worker& worker) {
  WorkerProgress& w = worker.progress;
  RankReport r;
  r.rank = worker.global_rank;
  r.pid = worker.process.pid();
  r.phase = worker.phases.phase();
  r.init_entries = worker.phases.init_entries();
  r.state = !worker.process.status() && !worker.debugger.debugging() && traced_by_a_person(worker.process.pid())
                ? std::string(RankReport::kDebuggingState)
                : worker.state_text();
  r.steps = w.steps_;
  r.max_interval_ms = std::exchange(w.recent_max_interval_ms_, 0);
  r.span_ms = std::exchange(w.recent_span_ms_, -1);
  r.wait_ms = std::exchange(w.recent_wait_ms_, -1);
  const bool progressed = w.steps_ > 0 || !w.section_.empty();
  r.progress_age_ms =
      progressed ? static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - w.last_progress_)
                                         .count())
                 : -1;
  r.section = w.section_;
  return r;
}

}  // namespace ddplaunch
