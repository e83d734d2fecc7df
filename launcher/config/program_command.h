// Which command the workers run for PROGRAM [ARGS...], torchrun's way (a script runs under
// python) without breaking ddplaunch's own (an executable runs as is).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/command_line.h"

namespace ddplaunch {

// The interpreter for scripts: `--python` when given, else $PYTHON_EXEC (torchrun's
// override), else /usr/bin/python3 when it exists, else python3 from PATH.
std::string python_interpreter(const std::string& flag, const std::map<std::string, std::string>& env);

// ProgramMode::NoPython: `program` as is. Module: PYTHON -u -m MODULE ARGS. RunPath:
// PYTHON -u SCRIPT ARGS. Auto: as is when program[0] is an executable file (a path with a
// '/', or a name found on PATH) and does not end in .py; otherwise PYTHON -u SCRIPT ARGS
// (a .py file, or a file that is not executable). `-u` as torchrun: unbuffered output, so
// every line reaches the terminal (and ddplaunch's init detection) when it is printed.
std::vector<std::string> program_command(ProgramMode mode, const std::vector<std::string>& program,
                                         const std::string& python);

}  // namespace ddplaunch
