// The two result shapes every preflight function returns instead of throwing or logging.
// CheckOutcome: a yes/no check with a message for the person at the terminal.
// Result<T>: a value, or an actionable error message saying what failed and what to do.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace ddplaunch::preflight {

// ok == false: `message` says what failed, the value at fault, the likely cause and the fix.
// ok == true:  `message` is empty or a note worth showing (e.g. "skipped: single node").
struct CheckOutcome {
  bool ok = true;
  std::string message;

  static CheckOutcome pass(std::string note = {}) { return {true, std::move(note)}; }
  static CheckOutcome fail(std::string why) { return {false, std::move(why)}; }
  explicit operator bool() const { return ok; }
};

// Either a value or an error message (same wording rules as CheckOutcome::message).
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

}  // namespace ddplaunch::preflight
