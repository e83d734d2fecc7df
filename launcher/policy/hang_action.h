// What the master does when a rank passes its hang deadline: hang.action as a
// value, and the rule that resolves "auto". Pure; the JobPolicy acts on it.
#pragma once

#include <string_view>

#include "ddplaunch/base/name_table.h"
#include "policy/restart_settings.h"

namespace ddplaunch {

enum class HangAction { Report, Restart, Stop };
std::string_view hang_action_name(HangAction action);

// hang.action as configured: one of the actions, or auto.
enum class HangActionSetting { Report, Restart, Stop, Auto };
inline constexpr NameTable<HangActionSetting, 4> kHangActionSettingNames{{{
    {HangActionSetting::Report, "report"},
    {HangActionSetting::Restart, "restart"},
    {HangActionSetting::Stop, "stop"},
    {HangActionSetting::Auto, "auto"},
}}};
// "auto": restart when the user asked for runtime restarts (--max-restarts > 0 with runtime
// in restart_on), else stop.
HangAction resolve_hang_action(HangActionSetting configured, const RestartSettings& restart);

}  // namespace ddplaunch
