// hang.action: names and the "auto" rule (see hang_action.h).
#include "policy/hang_action.h"

namespace ddplaunch {

namespace {
constexpr NameTable<HangAction, 3> kHangActionNames{{{
    {HangAction::Report, "report"},
    {HangAction::Restart, "restart"},
    {HangAction::Stop, "stop"},
}}};
}  // namespace

std::string_view hang_action_name(HangAction action) { return kHangActionNames.name(action); }

HangAction resolve_hang_action(HangActionSetting configured, const RestartSettings& restart) {
  switch (configured) {
    case HangActionSetting::Report: return HangAction::Report;
    case HangActionSetting::Restart: return HangAction::Restart;
    case HangActionSetting::Stop: return HangAction::Stop;
    case HangActionSetting::Auto: break;
  }
  return restart.max_restarts > 0 && restart.on_runtime_failure ? HangAction::Restart : HangAction::Stop;
}

}  // namespace ddplaunch
