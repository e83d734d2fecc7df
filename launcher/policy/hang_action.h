// What the master does when a rank passes its hang deadline: hang.action as a
// value, and the rule that resolves "auto". Pure; the JobPolicy acts on it.
#pragma once

#include <string>
#include <string_view>

#include "policy/restart_settings.h"

namespace ddplaunch {

enum class HangAction { Report, Restart, Stop };
std::string_view hang_action_name(HangAction action);
// hang.action "auto": restart when the user asked for runtime restarts (--max-restarts > 0
// with runtime in restart_on), else stop.
HangAction resolve_hang_action(const std::string& configured, const RestartSettings& restart);

}  // namespace ddplaunch
