// Helpers of the JobPolicy tests: the first decision of a type, how many, and the log text.
#pragma once

#include <string>
#include <variant>

#include "policy/job_policy.h"

namespace ddplaunch::testing {

template <class T>
const T* find(const JobPolicy::Decisions& d) {
  for (const auto& x : d)
    if (auto* p = std::get_if<T>(&x)) return p;
  return nullptr;
}

template <class T>
int count(const JobPolicy::Decisions& d) {
  int n = 0;
  for (const auto& x : d) n += std::holds_alternative<T>(x) ? 1 : 0;
  return n;
}

inline std::string logs(const JobPolicy::Decisions& d) {
  std::string all;
  for (const auto& x : d)
    if (auto* l = std::get_if<decision::Log>(&x)) all += l->text + "\n";
  return all;
}

}  // namespace ddplaunch::testing
