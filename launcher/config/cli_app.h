// Builds the CLI11 application from the option table (one CLI11 option per flag row). Used
// by the parser and by --help; include only in config/*.cpp (CLI11 is a heavy header).
#pragma once

#include <map>

#include <CLI/CLI.hpp>

#include "config/option_table.h"

namespace ddplaunch {

void add_flags(CLI::App& app, std::map<const CLI::Option*, const OptionSpec*>& options);

}  // namespace ddplaunch
