// Result<T>: a value, or an actionable error message saying what failed and what to do.
// The shape every fallible function below the CLI returns instead of throwing or logging
// (STYLE.md habit 3); it lives here, under every module, so that none has to include
// another's header just to say "this can fail".
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace ddplaunch {

// `error` names what failed, the value at fault, the likely cause and the fix.
template <typename T>
struct Result {
  std::optional<T> value;
  std::string error;

  static Result success(T v) { return Result{std::move(v), {}}; }
  static Result failure(std::string why) { return Result{std::nullopt, std::move(why)}; }
  bool ok() const { return value.has_value(); }
  explicit operator bool() const { return ok(); }
  const T& operator*() const { return *value; }
  const T* operator->() const { return &*value; }
};

}  // namespace ddplaunch
