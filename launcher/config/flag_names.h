// How a typed flag finds its row of the option table: its spellings (`_` and `-` alike),
// argparse's unambiguous prefixes (torchrun's users rely on them), and "did you mean".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/option_table.h"

namespace ddplaunch {

// The long name a flag is known by ("nproc-per-node" for "--nproc-per-node").
std::string primary_name(const OptionSpec& flag);
// Every spelling of a flag with its dashes: "-r", "--redirects".
std::vector<std::string> spellings(const OptionSpec& flag);

// The flag spelled `name` (without leading dashes; `_` and `-` equivalent), or nullptr.
const OptionSpec* find_flag(std::string_view name);

// The long flags `prefix` abbreviates (`--redirect` is `--redirects`): one entry when
// unambiguous, every candidate otherwise, none when no long flag starts with it.
std::vector<const OptionSpec*> flags_with_prefix(std::string_view prefix);

// "--nproc-per-node" for a mistyped "--nproc-per-nod": the closest spelling by edit
// distance, when close enough to be a likely typo; "" otherwise.
std::string suggest_flag(std::string_view typed);

}  // namespace ddplaunch
