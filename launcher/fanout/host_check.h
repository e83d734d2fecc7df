// The check every host passes before a fan-out starts anything: one ssh command per host
// that reports, line by line, the address ssh reached it on, whether this terminal's
// directory exists there, which ddplaunch it would run and its version, and whether the
// program is there. Pure: the script's text, the parsing of its answer, the verdict.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/base/exit_status.h"

namespace ddplaunch::fanout {

// One thing the program needs on the host; present when any of `alternatives` is (a command
// name on PATH, or a path relative to the directory) — `file` checks a plain file instead.
struct NeededProgram {
  std::string label;                      // how the problem names it: "python3", "train.py"
  std::vector<std::string> alternatives;
  bool file = false;                      // a script read by the interpreter, not executed
};

struct CheckRequest {
  std::string cwd;                        // this terminal's directory
  std::string launcher;                   // this ddplaunch's absolute path (tried first there)
  std::vector<NeededProgram> needed;
};

// What PROGRAM needs, from the command the workers would run here (program_command) and the
// command line as typed: the interpreter and the script for a script (also when typed as
// `python3 train.py`), the executable otherwise. A module (-m) is left to the workers: finding it needs the interpreter's paths.
std::vector<NeededProgram> needed_programs(const std::vector<std::string>& typed,
                                           const std::vector<std::string>& command);

// The command given to ssh: a POSIX sh script printing "ddplaunch-check KEY VALUE" lines.
std::string check_command(const CheckRequest& request);

struct HostReport {
  std::string reached_address;            // the server address of $SSH_CONNECTION ("" if absent)
  bool cwd_found = false;
  std::string launcher;                   // the ddplaunch found there ("" = none)
  std::string version;                    // its --version line
  std::vector<std::string> missing;       // labels of NeededProgram not found
};

HostReport parse_check_output(std::string_view output, const CheckRequest& request);

// How the check of one host ended, as the runner saw it.
struct CheckRun {
  ExitStatus status;
  bool timed_out = false;
  double timeout_s = 0;
  std::string output;                     // stdout
  std::string errors;                     // stderr: ssh's own complaints
};

// "" when the host can run its node; otherwise why not, for a person ("ssh could not reach it:
// Connection refused — ..."), without the host's name (the caller puts it in front).
std::string check_problem(const CheckRun& run, const HostReport& report, const CheckRequest& request,
                          std::string_view local_version);

}  // namespace ddplaunch::fanout
