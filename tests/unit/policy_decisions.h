// Helpers of the policy tests (JobPolicy, NodePolicy): the first decision of a type, how many, the log text, and
// a failure report as a node sends it.
#pragma once

#include <string>
#include <utility>
#include <variant>

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

template <class Decisions>
std::string logs(const Decisions& d) {
  std::string all;
  for (const auto& x : d)
    if (auto* l = std::get_if<decision::Log>(&x)) all += l->text + "\n";
  return all;
}

}  // namespace ddplaunch::testing
