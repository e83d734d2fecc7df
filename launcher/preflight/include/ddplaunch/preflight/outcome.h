// The two result shapes every preflight function returns instead of throwing or logging.
// CheckOutcome: a yes/no check with a message for the person at the terminal.
// Result<T>: a value or an actionable error (ddplaunch/base/result.h, shared by every module).
#pragma once

#include <string>
#include <utility>

#include "ddplaunch/base/result.h"

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

// Result<T> is every module's (ddplaunch/base/result.h); preflight names it as its own.
using ddplaunch::Result;

}  // namespace ddplaunch::preflight
