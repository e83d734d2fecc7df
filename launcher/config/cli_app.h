// Builds the CLI11 application from the option table (one CLI11 option per flag row). Used
// by the parser and by --help; include only in config/*.cpp (CLI11 is a heavy header).
#pragma once

#include <map>
#include <set>

#include <CLI/CLI.hpp>

#include "config/option_table.h"

namespace ddplaunch {

// Every flag of the table, or only those in `only` (the parser's: CLI11 checks each new
// option against all it holds, so a table's worth costs every start ~1.7 M instructions).
void add_flags(CLI::App& app, std::map<const CLI::Option*, const OptionSpec*>& options,
               const std::set<const OptionSpec*>* only = nullptr);

}  // namespace ddplaunch
