// What a launcher reads in a worker's own output to know that the worker stopped in a
// debugger (pdb and its relatives print their prompt, unterminated, on stdout, right after
// the "> file(line)function()" location), and what a typed line asks the debugger to do.
// Pure: text in, facts out. The node (supervise) and the console (debug_console) share it,
// so both agree on when a rank stops and when it runs on.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ddplaunch::debug {

// The unterminated text a worker left at the end of its stdout, when it is a debugger's
// prompt ("(Pdb) ", "(Pdb++) ", "ipdb> ", "(gdb) "): the prompt; nullopt otherwise.
std::optional<std::string> debugger_prompt(std::string_view unterminated);

// Where pdb stopped, from the line it prints before the prompt:
// "> /home/u/train.py(88)load_batch()" → {/home/u/train.py, 88, load_batch}.
struct StopLocation {
  std::string file;
  int line = 0;
  std::string function;
  std::string code;  // the "-> x = batch[0]" line after it, without "-> " ("" when not seen)
  // "train.py:88 in load_batch" (the file's last path component).
  std::string short_text() const;
};
std::optional<StopLocation> parse_pdb_location(std::string_view line);
// "-> x = batch[0]" → "x = batch[0]"; nullopt for any other line.
std::optional<std::string> parse_pdb_code_line(std::string_view line);

// What a line typed at a rank's prompt does to the rank.
enum class DebuggerCommand {
  Other,   // the rank stays in the debugger (p, l, n, s, w, ...: it prints and prompts again)
  Resume,  // c / cont / continue: it runs on until its next breakpoint
  Quit,    // q / quit / exit / EOF: ends the debugged program
};
DebuggerCommand classify_debugger_command(std::string_view line);

}  // namespace ddplaunch::debug
