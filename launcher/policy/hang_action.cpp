// hang.action: names and the "auto" rule (see hang_action.h).
#include "policy/hang_action.h"

namespace ddplaunch {

std::string_view hang_action_name(HangAction action) {
  switch (action) {
    case HangAction::Report: return "report";
    case HangAction::Restart: return "restart";
    case HangAction::Stop: return "stop";
  }
  return "?";
}

HangAction resolve_hang_action(const std::string& configured, const RestartSettings& restart) {
  if (configured == "report") return HangAction::Report;
  if (configured == "restart") return HangAction::Restart;
  if (configured == "stop") return HangAction::Stop;
  return restart.max_restarts > 0 && restart.on_runtime_failure ? HangAction::Restart : HangAction::Stop;
}

}  // namespace ddplaunch
