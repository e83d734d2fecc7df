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

}  // namespace ddplaunch
