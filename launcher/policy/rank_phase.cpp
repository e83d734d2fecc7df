// Names of rank phases, shared by the wire codec, the status table and the reports.
#include "policy/rank_phase.h"

#include <array>
#include <utility>

namespace ddplaunch {

namespace {
constexpr std::array<std::pair<RankPhase, std::string_view>, 4> kPhaseNames{{
    {RankPhase::Setup, "setup"},
    {RankPhase::Init, "init"},
    {RankPhase::Running, "running"},
    {RankPhase::Exited, "exited"},
}};
}  // namespace

std::string_view rank_phase_name(RankPhase phase) {
  for (const auto& [p, name] : kPhaseNames)
    if (p == phase) return name;
  return "setup";
}

std::optional<RankPhase> rank_phase_from_name(std::string_view name) {
  for (const auto& [p, n] : kPhaseNames)
    if (n == name) return p;
  return std::nullopt;
}

}  // namespace ddplaunch
