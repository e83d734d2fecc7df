// The program's own error in a failed worker's last words: the Python exception (type and
// message) from the error file's summary, the shim's init_failed text or a traceback in the
// output tail, else its last line. It names the root cause of a setup or runtime failure,
// tells a program's own deterministic error inside init from an init failure, and lets the
// policy see the same error twice in a row.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "policy/failure.h"

namespace ddplaunch {

struct ProgramError {
  std::string type;     // "ModuleNotFoundError" (last dotted part of the exception's name)
  std::string message;  // "No module named 'x'"
  std::string line;     // the whole line as printed: "ModuleNotFoundError: No module named 'x'"
};

// The Python exception a failed worker reported or printed last; nullopt when none is seen.
std::optional<ProgramError> python_exception(const WorkerFailure& failure);

// Exception types that mean a mistake in the program or its input (ImportError, NameError,
// ValueError, FileNotFoundError, ...): deterministic, never a network or NCCL condition.
// RuntimeError, OSError, TimeoutError and torch's Dist* errors are not among them.
bool is_program_exception_type(std::string_view type);

// The one line that identifies a failure across generations: the exception line, else the
// detail's first line, else the last output line ("" when the rank said nothing).
std::string error_line(const WorkerFailure& failure);

// True when the failure spends the automatic init budget (DESIGN.md "Phases of a worker"):
// it failed inside init (a shim's init report, an init signature in its output, the group's
// init deadline, a node out of resources at spawn), and not with a program's own exception.
bool is_init_failure(const WorkerFailure& failure);

}  // namespace ddplaunch
