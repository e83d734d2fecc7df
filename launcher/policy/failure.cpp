// Names of failure kinds and phases: the one table the wire codec and the reports use.
#include "policy/failure.h"

#include "ddplaunch/base/name_table.h"

namespace ddplaunch {

namespace {
constexpr NameTable<FailureKind, 8> kKindNames{{{
    {FailureKind::Exited, "exited"},
    {FailureKind::InitFailed, "init_failed"},
    {FailureKind::InitTimeout, "init_timeout"},
    {FailureKind::SetupTimeout, "setup_timeout"},
    {FailureKind::SpawnFailed, "spawn_failed"},
    {FailureKind::SpawnNoResources, "spawn_no_resources"},
    {FailureKind::Hang, "hang"},
    {FailureKind::DebuggerQuit, "debugger_quit"},
}}};
}  // namespace

std::string_view failure_kind_name(FailureKind kind) { return kKindNames.name(kind); }
std::optional<FailureKind> failure_kind_from_name(std::string_view name) { return kKindNames.parse(name); }
std::string_view failure_phase_name(FailurePhase phase) {
  switch (phase) {
    case FailurePhase::Setup: return "setup";
    case FailurePhase::Init: return "init";
    case FailurePhase::Runtime: return "runtime";
  }
  return "?";
}

std::optional<FailurePhase> failure_phase_from_name(std::string_view name) {
  for (FailurePhase p : {FailurePhase::Setup, FailurePhase::Init, FailurePhase::Runtime})
    if (failure_phase_name(p) == name) return p;
  return std::nullopt;
}

}  // namespace ddplaunch
