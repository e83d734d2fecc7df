// The one table of ddplaunch's options: a row per config key (its YAML key, the LaunchConfig
// member it sets, its allowed range, what it means) and per command-line flag (spellings,
// group, value type, --help line, torchrun's PET_* variable); a key that has a flag is one
// row. The flag parser, the PET_* fallbacks, the YAML reader and --set, the range checks,
// --help, the man page and configs/default.yaml are all made from it, so a key added here
// appears everywhere and nowhere else needs to know it.
#pragma once

#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/option_field.h"

namespace ddplaunch {

struct CommandLine;

// --help's sections, in the order it shows them.
enum class FlagGroup { Config, JobShape, Rendezvous, Program, Restarts, Stopping, Output, FanOut, Checks, Placement, Debugging };

// How a flag's value is checked (the same check for a flag and for its PET_* variable).
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
  std::optional<std::string> endpoint_given, rdzv_backend;  // as typed: etcd reads the endpoint as its list
  std::string rdzv_backend_source;  // "--rdzv-backend" or "PET_RDZV_BACKEND=etcd", for messages
  std::optional<double> keep_alive_interval_s;
  std::optional<int> keep_alive_attempts;
  void set(std::string key, std::string value);
  void note(std::string message);
  void error(std::string message);
};

using ApplyFlag = void (*)(const std::string& value, FlagContext& context);

// The numbers a key allows: sane limits for people, not what the type holds. min > max: none.
struct ValueRange {
  double min = 0;
  double max = -1;
  std::string_view unit = {};  // "seconds", "steps", or "" for counts
  bool any() const { return min <= max; }
};

struct OptionSpec {
  std::string_view heading = {};      // default.yaml: a comment block before the key ("--- restarts ---")
  std::string_view key = {};          // as YAML spells it, nested ones dotted: "timeout.base_s"; "" = a flag only
  Field field = {};                   // the member the key sets
  std::string_view doc = {};          // default.yaml and man page: what the key means ("" = help)
  ValueRange range = {};              // checked for the flag, PET_*, YAML and --set alike
  std::string_view names = {};        // CLI11 spelling, dash form: "-r,--redirects"; "" = YAML/--set only
  FlagGroup group = FlagGroup::Config;
  ValueKind kind = ValueKind::Text;
  std::string_view value_name = {};   // shown in --help: "N|MIN:MAX"
  std::string_view pet = {};          // torchrun's environment fallback, "" when torchrun has none
  ApplyFlag apply = nullptr;          // what the flag does; nullptr: `key` takes the value as given
  std::string_view help = {};         // the flag's --help line
  bool secret = false;                // --dry-run never prints the value
};

// Every row: keys in configs/default.yaml's order, each flag beside the key it sets.
std::span<const OptionSpec> option_table();

// The rows that are flags, in table order.
inline auto flag_table() {
  return option_table() | std::views::filter([](const OptionSpec& row) { return !row.names.empty(); });
}

// The flag rows as --help and the man page show them: by group (CLI11 lists groups in the
// order their first option was added), table order within a group.
std::vector<const OptionSpec*> flags_by_group();

// The row of a config key ("timeout.base_s"), or nullptr.
const OptionSpec* find_key(std::string_view key);

std::string_view group_title(FlagGroup group);

}  // namespace ddplaunch
