// The option table drives everything, so these check the table itself and what is made from
// it: configs/default.yaml is exactly what the table generates, every YAML key reaches its
// LaunchConfig member, and every flag (and PET_* variable) of a key sets that same member.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "config/command_line.h"
#include "config/config_docs.h"
#include "config/flag_names.h"
#include "config/option_table.h"
#include "config/yaml_config.h"

using namespace ddplaunch;

namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

const LaunchConfig kDefaults;

// A value of the key other than its default, within its range, as YAML writes it.
std::string sample_value(const OptionSpec& row) {
  // Keys whose flag translates or checks its value: one the flag keeps as it is.
  static const std::map<std::string_view, std::string> words{
      {"nproc_per_node", "3"}, {"master", "h7:1234"}, {"redirects", "1"},
      {"tee", "2"},            {"numa_binding", "socket"}, {"restart.restart_on", "[init]"},
      {"worker_port", "1234"}, {"hang.action", "report"},  {"shim", "python"},
      {"collapse_output", "on"}, {"etcd.protocol", "https"}, {"version_mismatch", "refuse"},
      {"straggler.action", "restart-without"}};
  if (auto it = words.find(row.key); it != words.end()) return it->second;
  const std::string fallback = field_text(row.field, kDefaults);
  auto in_range = [&](double v) { return !row.range.any() || (v >= row.range.min && v <= row.range.max); };
  if (std::holds_alternative<int& (*)(LaunchConfig&)>(row.field)) {
    const int d = std::stoi(fallback);
    return std::to_string(in_range(d + 1) ? d + 1 : d - 1);
  }
  if (std::holds_alternative<double& (*)(LaunchConfig&)>(row.field)) {
    const double d = std::stod(fallback);
    return fmt::format("{}", in_range(d + 0.5) ? d + 0.5 : (row.range.min + d) / 2);
  }
  if (std::holds_alternative<bool& (*)(LaunchConfig&)>(row.field)) return fallback == "true" ? "false" : "true";
  if (std::holds_alternative<std::vector<int>& (*)(LaunchConfig&)>(row.field)) return "[1, 2]";
  return "x7";
}

// What the member holds after `settings` (or YAML text) were applied onto the defaults.
std::string after_yaml(const OptionSpec& row, const std::string& yaml) {
  LaunchConfig c;
  auto errors = apply_yaml(yaml, "t.yaml", c);
  EXPECT_TRUE(errors.empty()) << row.key << ": " << joined(errors);
  return field_text(row.field, c);
}

std::string after_command_line(const OptionSpec& row, const std::vector<std::string>& args,
                               const std::map<std::string, std::string>& env = {}) {
  CommandLine cl = parse_command_line(args, env);
  EXPECT_TRUE(cl.errors.empty()) << row.key << ": " << joined(cl.errors);
  LaunchConfig c;
  auto errors = apply_settings(cl.settings, "command line", c);
  EXPECT_TRUE(errors.empty()) << row.key << ": " << joined(errors);
  return field_text(row.field, c);
}

// "timeout.base_s: 7" nests as YAML wants it.
std::string yaml_line(std::string_view key, const std::string& value) {
  auto dot = key.find('.');
  if (dot == std::string_view::npos) return fmt::format("{}: {}\n", key, value);
  return fmt::format("{}:\n  {}: {}\n", key.substr(0, dot), key.substr(dot + 1), value);
}

}  // namespace

TEST(OptionTable, CheckedInDefaultYamlIsWhatTheTableMakes) {
  std::ifstream in(std::string(SOURCE_DIR) + "/configs/default.yaml");
  std::stringstream checked_in;
  checked_in << in.rdbuf();
  EXPECT_EQ(checked_in.str(), default_config_yaml())
      << "configs/default.yaml is made from launcher/config/option_table.cpp: "
         "run build/launcher/ddplaunch --print-default-config > configs/default.yaml";
}

TEST(OptionTable, TheGeneratedDefaultYamlHoldsTheBuiltInDefaults) {
  LaunchConfig from_file;
  from_file.nodes = 99;
  auto errors = apply_yaml(default_config_yaml(), "generated", from_file);
  ASSERT_TRUE(errors.empty()) << joined(errors);
  for (const OptionSpec& row : option_table())
    if (!row.key.empty()) {
      EXPECT_EQ(field_text(row.field, from_file), field_text(row.field, kDefaults)) << row.key;
    }
}

TEST(OptionTable, EveryRowIsAKeyOrAFlagThatDoesSomething) {
  std::set<std::string_view> keys;
  std::set<std::string> spelled;
  for (const OptionSpec& row : option_table()) {
    EXPECT_FALSE(row.key.empty() && row.names.empty()) << "a row with neither key nor flag";
    EXPECT_TRUE(row.key.empty() || keys.insert(row.key).second) << "key twice: " << row.key;
    EXPECT_EQ(row.key.empty(), std::holds_alternative<std::monostate>(row.field)) << row.key << row.names;
    EXPECT_TRUE(!row.key.empty() || row.apply) << row.names << ": a flag without a key needs an apply function";
    EXPECT_FALSE(row.doc.empty() && row.help.empty()) << row.key << ": nothing says what it means";
    for (const auto& s : row.names.empty() ? std::vector<std::string>{} : spellings(row)) {
      EXPECT_TRUE(spelled.insert(s).second) << "spelled twice: " << s;
    }
    // A default outside its own range would stop every start that does not set the key (a
    // choice's default may be a word: nproc_per_node's gpu-or-1).
    const std::string default_text = field_text(row.field, kDefaults);
    const bool numeric_default = default_text.find_first_not_of("0123456789.-") == std::string::npos;
    if (row.range.any() && !std::holds_alternative<std::string& (*)(LaunchConfig&)>(row.field) && numeric_default) {
      const double d = std::stod(default_text);
      EXPECT_TRUE(d >= row.range.min && d <= row.range.max) << row.key;
    }
  }
}

TEST(OptionTable, EveryYamlKeySetsItsMember) {
  for (const OptionSpec& row : option_table()) {
    if (row.key.empty()) continue;
    const std::string value = sample_value(row);
    ASSERT_NE(value, field_text(row.field, kDefaults)) << row.key;
    EXPECT_EQ(after_yaml(row, yaml_line(row.key, value)), value) << row.key;
    // --set KEY=VALUE, the command line's spelling of the same key.
    EXPECT_EQ(after_command_line(row, {"--set", std::string(row.key) + "=" + value, "p"}), value) << row.key;
  }
}

TEST(OptionTable, EveryFlagOfAKeySetsTheSameMemberAsTheKey) {
  for (const OptionSpec& row : option_table()) {
    if (row.key.empty() || row.names.empty()) continue;
    const std::string value = sample_value(row);
    std::string as_typed = value;  // lists: "1,2" on the command line
    if (as_typed.front() == '[') as_typed = as_typed.substr(1, as_typed.size() - 2);
    for (const std::string& spelling : spellings(row)) {
      std::vector<std::string> args{spelling};
      if (row.kind != ValueKind::Switch) args.push_back(as_typed);
      args.push_back("p");
      EXPECT_EQ(after_command_line(row, args), value) << spelling;
    }
    if (!row.pet.empty()) {
      const std::string pet_value = row.kind == ValueKind::Switch ? "1" : as_typed;
      EXPECT_EQ(after_command_line(row, {"p"}, {{std::string(row.pet), pet_value}}), value) << row.pet;
    }
  }
}

TEST(OptionTable, ManPageHasEveryFlagAndKey) {
  const std::string page = man_page("9.9");
  EXPECT_EQ(page.rfind(".TH DDPLAUNCH 1", 0), 0u);
  auto roff = [](std::string_view text) {
    std::string out;
    for (char ch : text) out += ch == '-' ? std::string("\\-") : std::string(1, ch);
    return out;
  };
  for (const OptionSpec& row : option_table()) {
    if (!row.key.empty()) {
      EXPECT_NE(page.find("\\fB" + roff(row.key) + "\\fR"), std::string::npos) << row.key;
    }
    for (const auto& s : row.names.empty() ? std::vector<std::string>{} : spellings(row)) {
      EXPECT_NE(page.find("\\fB" + roff(s) + "\\fR"), std::string::npos) << s;
    }
  }
  for (const char* text : {".SH OPTIONS", ".SH CONFIGURATION KEYS", ".SH EXIT STATUS", "DDPLAUNCH_TIMEOUT_S"})
    EXPECT_NE(page.find(text), std::string::npos) << text;
}

// Every text key reads the same way now (before, most took a YAML null as the text "null").
TEST(OptionTable, ATextKeyWithNothingAfterItIsAnError) {
  LaunchConfig c;
  auto errors = apply_yaml("log_dir:\n", "job.yaml", c);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("bad value '(not a scalar)' for 'log_dir'"), std::string::npos) << errors[0];
  EXPECT_TRUE(apply_yaml("log_dir: \"\"\nworker_port: 1234\n", "job.yaml", c).empty());
  EXPECT_EQ(c.worker_port.fixed, 1234);
}

// --dry-run prints every key of the table as YAML (the same writer as default.yaml), so the
// print reads back as a config, all but the secret.
TEST(OptionTable, DryRunsConfigIsEveryKeyAsYamlWithTheTokenHidden) {
  LaunchConfig c;
  c.nodes = 3;
  c.token = "s3cret-token-value";
  c.init_deadline.base_s = 61;
  c.restart.on_runtime_failure = false;
  c.program = {"train.py", "--lr"};
  const std::string text = describe(c);
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
  EXPECT_NE(text.find("token: \"\"  # set, not shown\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nprogram: [train.py, --lr]\n"), std::string::npos) << text;
  LaunchConfig back;
  auto errors = apply_yaml(text.substr(0, text.find("program:")), "dry-run", back);
  ASSERT_TRUE(errors.empty()) << joined(errors);
  for (const OptionSpec& row : option_table()) {
    if (row.key.empty() || row.secret) continue;
    EXPECT_EQ(field_text(row.field, back), field_text(row.field, c)) << row.key;
  }
  EXPECT_EQ(back.token, "");
}
