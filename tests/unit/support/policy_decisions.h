// Helpers of the policy tests (JobPolicy, NodePolicy): the first decision of a type, how many, the log text, a
// failure report and a rank's phase as a node sends them, membership settings, and a JobPolicy decision with
// every field as text.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ddplaunch/base/overloaded.h"
#include "ddplaunch/rendezvous/generation_format.h"
#include "policy/job_policy.h"

namespace ddplaunch::testing {

// Any list of decision variants: the JobPolicy's and the NodePolicy's.
template <class T, class Decisions>
const T* find(const Decisions& d) {
  for (const auto& x : d)
    if (auto* p = std::get_if<T>(&x)) return p;
  return nullptr;
}

template <class T, class Decisions>
int count(const Decisions& d) {
  int n = 0;
  for (const auto& x : d) n += std::holds_alternative<T>(x) ? 1 : 0;
  return n;
}

// A failure of global `rank` on node `node_rank` (host "host<node_rank>"), as a node reports it.
inline FailureReport failure(int node_rank, int rank, FailurePhase phase = FailurePhase::Init,
                      FailureKind kind = FailureKind::Exited, int code = 3, std::string detail = "") {
  FailureReport r;
  r.host = "host" + std::to_string(node_rank);
  r.failure.node_rank = node_rank;
  r.failure.global_rank = rank;
  r.failure.pid = 100 + rank;
  r.failure.phase = phase;
  r.failure.kind = kind;
  r.failure.status = ExitStatus{false, code, 0, false};
  r.failure.detail = std::move(detail);
  r.failure.tail = {"last words of rank " + std::to_string(rank)};
  return r;
}

// A rank's phase as its node reports it (pid 100 + rank).
inline RankReport rank(int r, RankPhase phase, int entries) {
  RankReport report;
  report.rank = r;
  report.pid = 100 + r;
  report.phase = phase;
  report.init_entries = entries;
  return report;
}

// Membership mode with MIN:MAX nodes and spares, a 5 s last call and a 30 s wait below MIN.
inline void enable_membership(PolicySettings& s, int min_nodes, int max_nodes, int spares) {
  s.membership = true;
  s.membership_settings.min_nodes = min_nodes;
  s.membership_settings.max_nodes = max_nodes;
  s.membership_settings.spares = spares;
  s.membership_settings.last_call_s = 5;
  s.membership_settings.below_min_wait_s = 30;
}

template <class Decisions>
std::string logs(const Decisions& d) {
  std::string all;
  for (const auto& x : d)
    if (auto* l = std::get_if<decision::Log>(&x)) all += l->text + "\n";
  return all;
}

// Every field of a JobPolicy decision, on one line: two lists of decisions are the same when
// their descriptions are. A new kind of decision does not compile here until it is described;
// doubles are written to the last bit ({} is the shortest exact form).
inline std::string describe(const Decision& d) {
  using namespace decision;
  constexpr std::string_view kSeverity[] = {"info", "warn", "error"};
  return std::visit(
      Overloaded{
          [&](const Log& x) { return fmt::format("Log{{{}, {}}}", kSeverity[static_cast<int>(x.severity)], x.text); },
          [](const PlanGeneration& x) {
            return fmt::format("PlanGeneration{{{}, fresh_port {}, {} s, {}}}", x.generation, x.fresh_port,
                               x.init_deadline_s, x.init_deadline_explained);
          },
          [](const RefuseJob& x) { return fmt::format("RefuseJob{{{}}}", x.reason); },
          [](const ScheduleRestart& x) { return fmt::format("ScheduleRestart{{{}, {} s}}", x.generation, x.delay_s); },
          [](const OrderRestart& x) {
            return fmt::format("OrderRestart{{{}, {}, members {}, ran_workers {}, hold {}}}", x.generation, x.reason,
                               x.members, x.ran_workers, x.hold);
          },
          [](const OrderStop& x) { return fmt::format("OrderStop{{{}, exit {}, {}}}", x.generation, x.exit_code, x.reason); },
          [](const EndJob& x) { return fmt::format("EndJob{{exit {}}}", x.exit_code); },
          [](const AbortJoin& x) { return fmt::format("AbortJoin{{{}}}", x.reason); },
          [](const ArmInitDeadline& x) {
            return fmt::format("ArmInitDeadline{{{}, serial {}, {} s}}", x.generation, x.serial, x.seconds);
          },
          [](const PrintTable& x) { return fmt::format("PrintTable{{{}}}", x.text); },
          [](const StartWorkers& x) { return fmt::format("StartWorkers{{{}, ifname '{}'}}", x.generation, x.ifname); },
          [](const BeginGeneration& x) {
            return fmt::format("BeginGeneration{{{}, members {}, ran_workers {}}}", x.generation, x.members,
                               x.ran_workers);
          },
          [](const TellMember& x) {
            return fmt::format("TellMember{{{}, {}, dismiss {}}}", x.member_id, x.text, x.dismiss);
          },
      },
      d);
}

}  // namespace ddplaunch::testing
