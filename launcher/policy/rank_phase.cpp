// Names of rank phases, shared by the wire codec, the status table and the reports.
#include "policy/rank_phase.h"

#include "ddplaunch/base/name_table.h"

namespace ddplaunch {

namespace {
constexpr NameTable<RankPhase, 4> kPhaseNames{{{
    {RankPhase::Setup, "setup"},
    {RankPhase::Init, "init"},
    {RankPhase::Running, "running"},
    {RankPhase::Exited, "exited"},
}}};
}  // namespace

std::string_view rank_phase_name(RankPhase phase) { return kPhaseNames.name(phase); }
std::optional<RankPhase> rank_phase_from_name(std::string_view name) { return kPhaseNames.parse(name); }

}  // namespace ddplaunch
