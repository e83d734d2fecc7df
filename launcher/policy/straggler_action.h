// What the master does about a persistent straggler (straggler.action): only report it, or
// restart the group without its node when a spare can take the node's place.
#pragma once

#include "ddplaunch/base/name_table.h"

namespace ddplaunch {

enum class StragglerAction { Report, RestartWithout };
inline constexpr NameTable<StragglerAction, 2> kStragglerActionNames{{{
    {StragglerAction::Report, "report"},
    {StragglerAction::RestartWithout, "restart-without"},
}}};

}  // namespace ddplaunch
