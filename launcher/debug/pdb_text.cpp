// Reading pdb's prompt and location lines; classifying typed commands.
#include "debug/pdb_text.h"

#include <array>
#include <charconv>

namespace ddplaunch::debug {

namespace {
// Prompts of pdb, pdb++, ipdb/IPython's debugger and gdb. A program's own partial line
// ("Loading... ") never ends in one of these exactly.
constexpr std::array<std::string_view, 5> kPrompts = {"(Pdb) ", "(Pdb++) ", "ipdb> ", "ipdb>  ", "(gdb) "};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
}  // namespace

std::optional<std::string> debugger_prompt(std::string_view unterminated) {
  for (std::string_view prompt : kPrompts) {
    // The prompt ends the text, and starts it or follows the end of an earlier line's text
    // (pdb may write "\n(Pdb) " after a partial line of the program's).
    if (unterminated.size() < prompt.size() || unterminated.substr(unterminated.size() - prompt.size()) != prompt) continue;
    return std::string(prompt);
  }
  return std::nullopt;
}

std::optional<StopLocation> parse_pdb_location(std::string_view line) {
  // "> FILE(LINE)FUNCTION()" — FILE may hold parentheses itself: the last "(" before ")FUNC" wins.
  if (line.size() < 6 || line.substr(0, 2) != "> ") return std::nullopt;
  line.remove_prefix(2);
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() < 2 || line.substr(line.size() - 2) != "()") return std::nullopt;
  line.remove_suffix(2);
  const std::size_t close = line.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  const std::size_t open = line.rfind('(', close);
  if (open == std::string_view::npos || open == 0) return std::nullopt;
  StopLocation where;
  const std::string_view number = line.substr(open + 1, close - open - 1);
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), where.line);
  if (ec != std::errc{} || end != number.data() + number.size() || where.line < 0) return std::nullopt;
  where.file = std::string(line.substr(0, open));
  where.function = std::string(line.substr(close + 1));
  if (where.function.empty()) return std::nullopt;
  return where;
}

std::optional<std::string> parse_pdb_code_line(std::string_view line) {
  if (line.substr(0, 3) != "-> ") return std::nullopt;
  line.remove_prefix(3);
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return std::string(line);
}

std::string StopLocation::short_text() const {
  const std::size_t slash = file.find_last_of('/');
  const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  return base + ":" + std::to_string(line) + " in " + function;
}

DebuggerCommand classify_debugger_command(std::string_view line) {
  const std::string_view word = trim(line);
  // pdb's own names for them (its do_continue / do_quit / do_EOF aliases).
  if (word == "c" || word == "cont" || word == "continue") return DebuggerCommand::Resume;
  if (word == "q" || word == "quit" || word == "exit" || word == "EOF") return DebuggerCommand::Quit;
  return DebuggerCommand::Other;
}

}  // namespace ddplaunch::debug
