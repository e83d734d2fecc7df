// Parsing of the debug console's commands.
#include "debug/console_commands.h"

#include <charconv>

#include <fmt/format.h>

namespace ddplaunch::debug {

namespace {
constexpr int kMaxRank = 1 << 22;  // far above any world size; bounds "0-2000000000"

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == ':')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The first word of `rest` (and `rest` moves past it and the blanks after it).
std::string_view next_word(std::string_view& rest) {
  const std::size_t end = std::min(rest.find_first_of(" \t"), rest.size());
  std::string_view word = rest.substr(0, end);
  rest.remove_prefix(end);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  return word;
}

ConsoleCommand invalid(std::string error) {
  ConsoleCommand c;
  c.error = std::move(error);
  return c;
}

// "all", "node 1", "node1", "0,4-7"; consumes the words it used from `rest`.
std::optional<RankSelection> parse_selection(std::string_view& rest) {
  RankSelection s;
  std::string_view word = next_word(rest);
  if (word == "all") {
    s.all = true;
    return s;
  }
  if (word == "node" || word == "nodes") word = next_word(rest);
  else if (word.substr(0, 4) == "node") word.remove_prefix(word.substr(0, 5) == "nodes" ? 5 : 4);
  else {
    auto ranks = parse_index_list(word, kMaxRank);
    if (!ranks || ranks->empty()) return std::nullopt;
    s.ranks = std::move(*ranks);
    return s;
  }
  auto nodes = parse_index_list(word, kMaxRank);
  if (!nodes || nodes->empty()) return std::nullopt;
  s.nodes = std::move(*nodes);
  return s;
}
}  // namespace

ConsoleCommand parse_console_command(std::string_view line) {
  std::string_view rest = trim(line);
  const std::string_view verb = next_word(rest);
  ConsoleCommand c;
  if (verb == "list" || verb == "ls") c.kind = ConsoleCommand::Kind::List;
  else if (verb == "detach") c.kind = ConsoleCommand::Kind::Detach;
  else if (verb == "continue" || verb == "c") c.kind = ConsoleCommand::Kind::ContinueAll;
  else if (verb == "quit" || verb == "q") c.kind = ConsoleCommand::Kind::Quit;
  else if (verb == "help" || verb == "h" || verb == "?") c.kind = ConsoleCommand::Kind::Help;
  else if (verb == "attach" || verb == "a") {
    const std::string_view number = next_word(rest);
    int rank = -1;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), rank);
    if (number.empty() || ec != std::errc{} || end != number.data() + number.size() || rank < 0)
      return invalid(fmt::format("attach needs a rank number, e.g. `:attach 3` (got '{}')", number));
    c.kind = ConsoleCommand::Kind::Attach;
    c.rank = rank;
    const std::string_view flag = next_word(rest);
    if (flag == "--gdb") c.gdb = true;
    else if (!flag.empty()) return invalid(fmt::format("attach takes a rank and optionally --gdb (got '{}')", flag));
  } else if (verb == "ranks" || verb == "show") {
    const std::string_view list = next_word(rest);
    c.kind = ConsoleCommand::Kind::ShowRanks;
    if (list != "all") {
      auto ranks = parse_index_list(list, kMaxRank);
      if (list.empty() || !ranks || ranks->empty())
        return invalid(fmt::format("ranks needs the global ranks to show, e.g. `:ranks 5,8-11`, or `:ranks all` (got '{}')",
                                   list));
      c.shown_ranks = std::move(*ranks);
    }
  } else if (verb == "cast") {
    auto targets = parse_selection(rest);
    if (!targets)
      return invalid("cast needs ranks and a debugger command: `:cast 0,4-7 p x`, `:cast node 1 bt`, `:cast all w`");
    if (rest.empty()) return invalid("cast needs a debugger command after the ranks, e.g. `:cast 0,2 p loss`");
    c.kind = ConsoleCommand::Kind::Cast;
    c.targets = std::move(*targets);
    c.debugger_input = std::string(rest);
  } else {
    return invalid(fmt::format("'{}' is not a console command; type `:help` for the list (debugger commands go to "
                               "the attached rank: `:attach R` first)",
                               verb));
  }
  if (c.kind == ConsoleCommand::Kind::ShowRanks && !rest.empty())
    return invalid(fmt::format("ranks takes one list of ranks, e.g. `:ranks 0,4-7` (got '{}' after it)", rest));
  if (c.kind != ConsoleCommand::Kind::Attach && c.kind != ConsoleCommand::Kind::Cast &&
      c.kind != ConsoleCommand::Kind::ShowRanks && !rest.empty())
    return invalid(fmt::format("'{}' takes no arguments (got '{}')", verb, rest));
  return c;
}

std::string console_help_text() {
  return "debug console commands (at a rank's prompt, start them with ':'):\n"
         "  :list                  the stopped ranks: rank, node, host, pid, where, for how long\n"
         "  :attach R              type to rank R's debugger (one rank at a time)\n"
         "  :attach R --gdb        run gdb on rank R's node, attached to it (native frames, C++ workers)\n"
         "  :detach                back to this console's prompt; the rank stays stopped\n"
         "  :cast RANKS CMD        send CMD to several stopped ranks: `:cast 0,4-7 p x`, `:cast node 1 bt`, `:cast all w`\n"
         "  :continue              every stopped rank runs on\n"
         "  :ranks 5,8-11          the terminal shows only these ranks' output from now on, on every node\n"
         "                         (`:ranks all`: every rank again); log files keep every rank\n"
         "  :quit                  end the job on every node (asks first)\n"
         "  anything else          goes to the attached rank's debugger (pdb: p x, l, n, s, w, c, q)\n";
}

}  // namespace ddplaunch::debug
