// JobPolicy, hangs: the hang deadline as a failure, and the init deadline raised by the
// run history. Pure, like the rest of the policy.
#include <algorithm>

#include <fmt/format.h>

#include "policy/job_policy.h"

namespace ddplaunch {

using namespace decision;

// History: past runs of the same job needed up to history_init_s for init; the
// deadline is never shorter than that, and says so.
void JobPolicy::apply_history_to_init_deadline() {
  if (settings_.history_init_s <= 0) return;
  // timeout.max_s is the user's ceiling: history may raise the deadline up to it, never past.
  const double wanted = std::min(settings_.history_init_s, settings_.timeout.max_s);
  const std::string capped = wanted < settings_.history_init_s
                                 ? fmt::format(", capped by timeout.max_s {}", human_duration(settings_.timeout.max_s))
                                 : "";
  if (wanted <= timeout_s_) {
    timeout_explained_ += fmt::format("; history asks for {}{} ({})", human_duration(settings_.history_init_s), capped,
                                      settings_.history_explained);
    return;
  }
  timeout_s_ = wanted;
  timeout_explained_ += fmt::format("; raised to {} from history{} ({})", human_duration(timeout_s_), capped,
                                    settings_.history_explained);
}

JobPolicy::Decisions JobPolicy::on_hang(long generation, int rank, const std::string& detail, TimePoint now) {
  // hang.action report: the hang and its stacks were said already; the job goes on.
  if (settings_.hang_action == HangAction::Report)
    return {Log{Severity::Warn, "hang.action is report: nothing is stopped; the job goes on"}};
  if (generation != generation_ || phase_ != JobPhase::Running || rank < 0 ||
      rank >= static_cast<int>(tracker_.ranks().size()))
    return {};
  FailureReport report = failure_of_rank(rank, FailureKind::Hang, detail);
  report.failure.phase = FailurePhase::Runtime;
  return on_worker_failed(report.failure.node_rank, generation, report, now);
}

JobPolicy::Decisions JobPolicy::on_debugger_quit(long generation, int rank) {
  if (generation != generation_ || phase_ != JobPhase::Running || rank < 0 ||
      rank >= static_cast<int>(tracker_.ranks().size()))
    return {};
  FailureReport report = failure_of_rank(rank, FailureKind::DebuggerQuit, "");
  report.failure.phase = FailurePhase::Runtime;
  ++failure_count_;
  first_failure_ = report;  // the person's decision is the root cause, whatever the stop makes ranks print
  return order_stop(1, fmt::format("rank {} quit the debugger", rank));
}

}  // namespace ddplaunch
