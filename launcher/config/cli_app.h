// Builds the CLI11 application from the flag table (one CLI11 option per table row). Used
// by the parser and by --help; include only in config/*.cpp (CLI11 is a heavy header).
#pragma once

#include <map>

#include <CLI/CLI.hpp>

#include "config/flag_table.h"

namespace ddplaunch {

void add_flags(CLI::App& app, std::map<const CLI::Option*, const FlagSpec*>& options);

}  // namespace ddplaunch
