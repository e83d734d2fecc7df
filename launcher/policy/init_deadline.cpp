// InitDeadline: see init_deadline.h.
#include "policy/init_deadline.h"

#include <algorithm>

#include <fmt/format.h>

#include "policy/init_tracker.h"  // human_duration

namespace ddplaunch {

void InitDeadline::plan(const std::vector<rendezvous::NodeRecord>& nodes, int init_failure_restarts) {
  double rtt_ms = 0;
  for (const auto& n : nodes) rtt_ms = std::max(rtt_ms, n.rtt_ms);
  // The dedicated-NIC allowance applies when every node's user chose a socket interface.
  const bool dedicated_nic = !settings_.doctor && nodes.size() > 1 &&
                             std::all_of(nodes.begin(), nodes.end(), [](const auto& n) { return !n.facts.socket_ifname.empty(); });
  InitDeadlineValue value = apply_init_deadline_formula(
      settings_.formula, InitDeadlineInputs{.nodes = static_cast<int>(nodes.size()),
                                            .dedicated_nic = dedicated_nic,
                                            .rtt_ms = rtt_ms,
                                            .init_failure_restarts = init_failure_restarts});
  seconds_ = value.seconds;
  explained_ = std::move(value.explained);
  raise_to_history();
  armed_ = false;
}

// History: past runs of the same job needed up to history_init_s for init; the deadline is
// never shorter than that, and says so.
void InitDeadline::raise_to_history() {
  if (settings_.history_init_s <= 0) return;
  // timeout.max_s is the user's ceiling: history may raise the deadline up to it, never past.
  const double wanted = std::min(settings_.history_init_s, settings_.formula.max_s);
  const std::string capped = wanted < settings_.history_init_s
                                 ? fmt::format(", capped by timeout.max_s {}", human_duration(settings_.formula.max_s))
                                 : "";
  if (wanted <= seconds_) {
    explained_ += fmt::format("; history asks for {}{} ({})", human_duration(settings_.history_init_s), capped,
                              settings_.history_explained);
    return;
  }
  seconds_ = wanted;
  explained_ += fmt::format("; raised to {} from history{} ({})", human_duration(seconds_), capped,
                            settings_.history_explained);
}

std::optional<decision::ArmInitDeadline> InitDeadline::recheck(bool runs, Generation generation) {
  if (runs == armed_) return std::nullopt;
  armed_ = runs;
  if (!runs) return std::nullopt;
  ++serial_;
  return decision::ArmInitDeadline{generation, serial_, seconds_};
}

void InitDeadline::forget_armings() {
  armed_ = false;
  ++serial_;
}

}  // namespace ddplaunch
