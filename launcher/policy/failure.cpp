// Names of failure kinds and phases: the one table the wire codec and the reports use.
#include "policy/failure.h"

#include <array>
#include <utility>

namespace ddplaunch {

namespace {
constexpr std::array<std::pair<FailureKind, std::string_view>, 5> kKindNames{{
    {FailureKind::Exited, "exited"},
    {FailureKind::InitFailed, "init_failed"},
    {FailureKind::InitTimeout, "init_timeout"},
    {FailureKind::SetupTimeout, "setup_timeout"},
    {FailureKind::SpawnFailed, "spawn_failed"},
}};
}  // namespace

std::string_view failure_kind_name(FailureKind kind) {
  for (const auto& [k, name] : kKindNames)
    if (k == kind) return name;
  return "exited";
}

std::optional<FailureKind> failure_kind_from_name(std::string_view name) {
  for (const auto& [k, n] : kKindNames)
    if (n == name) return k;
  return std::nullopt;
}

std::string_view failure_phase_name(FailurePhase phase) { return phase == FailurePhase::Init ? "init" : "runtime"; }

}  // namespace ddplaunch
