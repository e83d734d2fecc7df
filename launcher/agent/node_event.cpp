// The GroupSupervisor as a producer of NodeEvents: each of its callbacks publishes one kind.
#include "agent/node_event.h"

namespace ddplaunch {

GroupCallbacks group_callbacks_publishing_to(NodeEvents& events) {
  using namespace node_event;
  return GroupCallbacks{
      .on_failure = [&events](const WorkerFailure& f) { events.publish(WorkerFailed{f}); },
      .on_phases_changed = [&events] { events.publish(PhasesChanged{}); },
      .on_paused = [&events](const Worker& w) { events.publish(RankPaused{w}); },
      .on_finished = [&events](const GroupOutcome& o) { events.publish(GroupFinished{o}); },
      .on_debugger_stopped =
          [&events](const Worker& w, const debug::StopLocation& where, const std::string& reason) {
            events.publish(DebuggerStopped{w, where, reason});
          },
      .on_debugger_output =
          [&events](const Worker& w, const std::string& lines, bool prompt) {
            events.publish(DebuggerOutput{w, lines, prompt});
          },
      .on_debugger_left = [&events](const Worker& w) { events.publish(DebuggerLeft{w}); },
      .on_rank_prompt =
          [&events](const Worker& w, const std::string& shown, bool secret) {
            events.publish(RankPromptShown{w, shown, secret});
          },
      .on_followed_line = [&events](int rank, std::string_view line) { events.publish(FollowedLine{rank, line}); },
  };
}

}  // namespace ddplaunch
