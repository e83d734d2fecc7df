// Where a program name leads on PATH: the one lookup the spawner, the config's program
// checks and the node facts (program fingerprint) share, so they never disagree about
// which file runs.
#pragma once

#include <string>

namespace ddplaunch {

// The program the launcher would run for `name`: itself when it contains a '/', else the
// first regular, executable file `dir/name` for the directories of PATH in order; "" when
// PATH has none.
std::string find_program(const std::string& name);

// "" when `name` can be started on this node, else why not, worded for the person who typed
// it: checked before any worker starts, so that a typo is a start-up error (exit 2) rather
// than every rank failing with exit 127 and a restart budget spent on it.
std::string program_start_problem(const std::string& name);

}  // namespace ddplaunch
