// JobPolicy, a rank the master itself judges: the hang watch's hang (a runtime failure of
// kind Hang) and a person's quit at the debug console (the job's root cause). Pure, like the
// rest of the policy.
#include <fmt/format.h>

#include "policy/job_policy.h"

namespace ddplaunch {

using namespace decision;

JobPolicy::Decisions JobPolicy::on_hang(Generation generation, int rank, const std::string& detail, TimePoint now) {
  // hang.action report: the hang and its stacks were said already; the job goes on.
  if (settings_.hang_action == HangAction::Report)
    return {Log{Severity::Warn, "hang.action is report: nothing is stopped; the job goes on"}};
  if (generation != generation_ || phase_ != JobPhase::Running || rank < 0 ||
      rank >= static_cast<int>(tracker_.ranks().size()))
    return {};
  FailureReport report = nodes_.failure_of_rank(rank, tracker_.ranks()[static_cast<std::size_t>(rank)],
                                                FailurePhase::Runtime, FailureKind::Hang, detail);
  return on_worker_failed(report.failure.node_rank, generation, report, now);
}

JobPolicy::Decisions JobPolicy::on_debugger_quit(Generation generation, int rank) {
  if (generation != generation_ || phase_ != JobPhase::Running || rank < 0 ||
      rank >= static_cast<int>(tracker_.ranks().size()))
    return {};
  // The person's decision is the root cause, whatever the stop makes ranks print.
  failures_.record_as_root_cause(nodes_.failure_of_rank(rank, tracker_.ranks()[static_cast<std::size_t>(rank)],
                                                         FailurePhase::Runtime, FailureKind::DebuggerQuit, ""));
  return order_stop(1, fmt::format("rank {} quit the debugger", rank));
}

}  // namespace ddplaunch
