// The one table of ddplaunch's command-line flags: names, group, value type, help, the
// torchrun PET_* variable that backs it, and what its value does. The parser (CLI11),
// --help, the environment fallbacks and "did you mean" all read it; a man page or shell
// completion generator must read it too, never a copy.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddplaunch {

struct CommandLine;

enum class FlagGroup { Config, JobShape, Rendezvous, Program, Restarts, Stopping, Output, Checks, NotBuilt, Placement, FanOut };

// How the value is checked (the same check for a flag and for its PET_* variable).
enum class ValueKind {
  Switch,    // no value; `--flag=true|false|1|0` also accepted
  Text,      // any non-empty text
  Count,     // integer >= 0
  Seconds,   // number >= 0
  Custom,    // checked by the flag's apply function
};

// What one flag value changes while a command line is translated into settings. Values
// that combine with others (--master-addr + --master-port, --rdzv-conf keep-alive keys)
// wait here until every flag was seen.
struct FlagContext {
  explicit FlagContext(CommandLine& command_line) : cl(command_line) {}
  CommandLine& cl;
  std::string source;  // "--nnodes" or "PET_NNODES=2:4": how messages name the value
  std::optional<std::string> master_addr, master_port;
  std::optional<double> keep_alive_interval_s;
  std::optional<int> keep_alive_attempts;
  void set(std::string key, std::string value);
  void note(std::string message);
  void error(std::string message);
};

using ApplyFlag = void (*)(const std::string& value, FlagContext& context);

struct FlagSpec {
  std::string_view names;       // CLI11 spelling, dash form: "-r,--redirects"; `_` twins accepted
  FlagGroup group;
  ValueKind kind;
  std::string_view value_name;  // shown in --help: "N|MIN:MAX"
  std::string_view setting;     // config key that takes the value as is ("" = apply decides)
  ApplyFlag apply;              // nullptr: settings[setting] = value
  std::string_view pet;         // torchrun's environment fallback, "" when torchrun has none
  std::string_view help;
};

std::span<const FlagSpec> flag_table();

// Checks `value` by the flag's kind, then applies it (its setting, or its apply function).
// The one path for command-line values and PET_* fallbacks alike.
void apply_flag_value(const FlagSpec& flag, const std::string& value, FlagContext& context);

// The long name a flag is known by ("nproc-per-node" for "--nproc-per-node").
std::string primary_name(const FlagSpec& flag);
// Every spelling of a flag with its dashes: "-r", "--redirects".
std::vector<std::string> spellings(const FlagSpec& flag);

// The flag spelled `name` (without leading dashes; `_` and `-` equivalent), or nullptr.
const FlagSpec* find_flag(std::string_view name);

// The long flags `prefix` abbreviates (argparse's rule, which torchrun's users rely on:
// `--redirect` is `--redirects`): one entry when unambiguous, every candidate's primary
// spelling otherwise, none when no long flag starts with it.
std::vector<const FlagSpec*> flags_with_prefix(std::string_view prefix);

// "--nproc-per-node" for a mistyped "--nproc-per-nod": the closest spelling by edit
// distance, when close enough to be a likely typo; "" otherwise.
std::string suggest_flag(std::string_view typed);

std::string_view group_title(FlagGroup group);

}  // namespace ddplaunch
