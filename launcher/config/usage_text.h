// The parts of --help that are not flags (what ddplaunch is, its forms and examples; how
// PROGRAM runs, the worker environment, exit codes, subcommands), shared with the man page.
#pragma once

#include <string>
#include <string_view>

namespace ddplaunch {

std::string_view usage_intro();   // first line: "ddplaunch — what it is"; then usage and examples
std::string usage_footer();       // sections, each a line "Title:" then indented lines

}  // namespace ddplaunch
