// Reading a Python exception out of a failure report, and the init-or-program rule.
#include "policy/program_error.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace ddplaunch {

namespace {

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// "pkg.mod.SomeError: text" or "SomeError" at the start of a line, as Python prints the last
// line of a traceback (and torch's @record the "message"). The name must end like an
// exception class so that ordinary "key: value" output is not taken for one.
std::optional<ProgramError> parse_exception_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (line.empty() || !(std::isalpha(static_cast<unsigned char>(line[0])) || line[0] == '_')) return std::nullopt;
  std::size_t end = 0;
  while (end < line.size() && is_identifier_char(line[end])) ++end;
  std::string_view name = line.substr(0, end);
  if (end < line.size() && line[end] != ':') return std::nullopt;
  std::string_view last = name.substr(name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1);
  auto ends_with = [&](std::string_view s) { return last.size() > s.size() && last.substr(last.size() - s.size()) == s; };
  const bool exception_like = ends_with("Error") || ends_with("Exception") || last == "KeyboardInterrupt" ||
                              last == "SystemExit" || last == "StopIteration" || ends_with("Interrupt");
  if (!exception_like) return std::nullopt;
  ProgramError e;
  e.type = std::string(last);
  if (end < line.size()) {
    std::string_view message = line.substr(end + 1);
    while (!message.empty() && message.front() == ' ') message.remove_prefix(1);
    e.message = std::string(message);
  }
  e.line = std::string(line);
  return e;
}

std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::optional<ProgramError> python_exception(const WorkerFailure& f) {
  // The error file's summary (or the shim's init_failed text) comes first: it is the
  // exception itself, even when the program's stderr was closed or redirected.
  if (auto e = parse_exception_line(first_line(f.detail))) return e;
  // Else the last exception line of a traceback in the tail.
  for (auto it = f.tail.rbegin(); it != f.tail.rend(); ++it)
    if (auto e = parse_exception_line(*it)) return e;
  return std::nullopt;
}

bool is_program_exception_type(std::string_view type) {
  static constexpr std::array<std::string_view, 26> kProgramTypes{
      "ImportError",       "ModuleNotFoundError", "NameError",         "UnboundLocalError", "SyntaxError",
      "IndentationError",  "TabError",            "TypeError",         "ValueError",        "AttributeError",
      "KeyError",          "IndexError",          "LookupError",       "FileNotFoundError", "IsADirectoryError",
      "NotADirectoryError", "PermissionError",    "FileExistsError",   "AssertionError",    "ZeroDivisionError",
      "ArithmeticError",   "NotImplementedError", "RecursionError",    "UnicodeDecodeError", "UnicodeEncodeError",
      "JSONDecodeError"};
  return std::find(kProgramTypes.begin(), kProgramTypes.end(), type) != kProgramTypes.end();
}

std::string error_line(const WorkerFailure& f) {
  if (auto e = python_exception(f)) return e->line;
  if (!f.detail.empty()) return std::string(first_line(f.detail));
  return f.tail.empty() ? std::string() : f.tail.back();
}

bool is_init_failure(const WorkerFailure& f) {
  switch (f.kind) {
    case FailureKind::InitTimeout:
    case FailureKind::SpawnNoResources: return true;
    case FailureKind::SpawnFailed:
    case FailureKind::Hang:
    case FailureKind::DebuggerQuit: return false;
    case FailureKind::SetupTimeout:  // a bound the user set on setup; kept on the init budget
    case FailureKind::Exited:
    case FailureKind::InitFailed: break;
  }
  if (f.phase != FailurePhase::Init) return false;
  // Inside init, but with an exception of the program's own making (a bad argument to
  // init_process_group, a missing file) and no NCCL/c10d/gloo signature: deterministic.
  if (f.init_signature.empty())
    if (auto e = python_exception(f); e && is_program_exception_type(e->type)) return false;
  return true;
}

}  // namespace ddplaunch
