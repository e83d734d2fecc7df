// The debug console's own commands, told apart from debugger input without ambiguity: at a
// rank's prompt they start with ':' (no pdb or gdb command does), at the console's own
// prompt (no rank attached) the ':' may be left out. Pure parsing, no effects.
#pragma once

#include <string>
#include <string_view>

#include "ddplaunch/base/index_list.h"

namespace ddplaunch::debug {

// Which stopped ranks a command means: "0,4-7", "node 1" / "node 0-1", or "all".
struct RankSelection {
  IndexList ranks;
  IndexList nodes;
  bool all = false;
};

struct ConsoleCommand {
  enum class Kind { List, Attach, Detach, Cast, ContinueAll, Quit, Help, ShowRanks, Invalid };
  Kind kind = Kind::Invalid;
  int rank = -1;               // attach
  bool gdb = false;            // attach R --gdb: a native debugger on that rank
  RankSelection targets;       // cast
  std::string debugger_input;  // cast: the line every target receives
  IndexList shown_ranks;       // ranks: the global ranks the terminal shows from now on (empty: all)
  std::string error;           // Invalid: what is wrong and what to type instead
};

// `line` is what was typed, with or without the leading ':'.
ConsoleCommand parse_console_command(std::string_view line);

// A line typed at a rank's prompt is a console command when it starts with ':'.
inline bool is_console_command(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  return !line.empty() && line.front() == ':';
}

std::string console_help_text();

}  // namespace ddplaunch::debug
