// A LaunchConfig as YAML, from the option table: configs/default.yaml (each key's doc as a
// comment, its flag and range, and its default as a default LaunchConfig holds it, so the
// file cannot claim a default the code does not have) and --dry-run's resolved config (the
// same keys, the secret hidden). Keys of a section ("timeout.base_s") nest under it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config_docs.h"
#include "config/flag_names.h"
#include "config/option_table.h"

namespace ddplaunch {

namespace {

constexpr const char* kPreamble =
    "# ddplaunch configuration: every key, with its default. Pass with --config FILE; command-line\n"
    "# flags override the file (`--set KEY=VALUE` sets any key, nested ones dotted: timeout.base_s).\n"
    "# Unknown keys and values of the wrong type are errors naming the key and its line.\n"
    "# Made by `ddplaunch --print-default-config` from launcher/config/option_table.cpp; do not\n"
    "# edit by hand (a unit test compares the two).\n";

// Each line of `text` as a comment at `indent`.
std::string comment(std::string_view text, std::string_view indent) {
  std::string out;
  for (std::size_t start = 0; start <= text.size();) {
    auto end = std::min(text.find('\n', start), text.size());
    out += fmt::format("{}# {}\n", indent, text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string key_facts(const OptionSpec& row) {
  std::string facts;
  if (!row.names.empty()) {
    std::string names;
    for (const auto& spelling : spellings(row)) names += (names.empty() ? "" : ", ") + spelling;
    facts = "flag: " + names + (row.pet.empty() ? "" : fmt::format(" (or {})", row.pet));
  }
  if (row.range.any())
    facts += fmt::format("{}allowed {} to {}{}{}", facts.empty() ? "" : "; ", row.range.min, row.range.max,
                         row.range.unit.empty() ? "" : " ", row.range.unit);
  return facts;
}

namespace {

// Every key of `config` as YAML, sections nested; `documented`: with each key's doc, flag and
// range as comments and the headings (default.yaml), else one line a key (--dry-run).
std::string config_yaml(const LaunchConfig& config, bool documented) {
  std::string out;
  std::string_view section;  // the nested section being written ("" = top level)
  for (const OptionSpec& row : option_table()) {
    if (row.key.empty()) continue;  // a flag only
    const auto dot = row.key.find('.');
    const std::string_view row_section = dot == std::string_view::npos ? "" : row.key.substr(0, dot);
    const bool opens_section = row_section != section && !row_section.empty();
    section = row_section;
    const std::string indent = section.empty() ? "" : "  ";
    if (documented) {
      // A blank line before each key's block (and around a heading); a section's name heads
      // the block of its first key.
      out += row.heading.empty() ? "\n" : "\n" + comment(row.heading, "") + "\n";
      if (opens_section) out += fmt::format("{}:\n", section);
      out += comment(row.doc.empty() ? row.help : row.doc, indent);
      if (auto facts = key_facts(row); !facts.empty()) out += comment(facts, indent);
    } else if (opens_section) {
      out += fmt::format("{}:\n", section);
    }
    std::string value = field_text(row.field, config);
    if (row.secret && value != "\"\"") value = "\"\"  # set, not shown";
    out += fmt::format("{}{}: {}\n", indent, row.key.substr(dot == std::string_view::npos ? 0 : dot + 1), value);
  }
  return out;
}

}  // namespace

std::string default_config_yaml() { return kPreamble + config_yaml(LaunchConfig{}, true); }

std::string describe(const LaunchConfig& config) {
  return config_yaml(config, false) + fmt::format("program: [{}]\n", fmt::join(config.program, ", "));
}

}  // namespace ddplaunch
