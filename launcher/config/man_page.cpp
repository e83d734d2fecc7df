// The man page from the option table: --help's intro and footer, every flag under its group
// (with the key it sets), then every config key with its default, range and meaning, which
// --help has no room for. Written here rather than parsed back out of --help's layout.
#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/format.h>

#include "config/config_docs.h"
#include "config/flag_names.h"
#include "config/option_table.h"
#include "config/usage_text.h"

namespace ddplaunch {

namespace {

// roff-safe text: backslashes and dashes escaped, a leading '.' or '\'' not read as a request.
std::string roff(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch == '\\') out += "\\e";
    else if (ch == '-') out += "\\-";
    else out += ch;
  }
  return !out.empty() && (out.front() == '.' || out.front() == '\'') ? "\\&" + out : out;
}

std::string bold(std::string_view text) { return "\\fB" + roff(text) + "\\fR"; }

// Text laid out in lines ("  ddplaunch --standalone ..."): kept as it is.
std::string no_fill(std::string_view block) {
  std::string out = ".nf\n";
  for (std::size_t start = 0; start < block.size();) {
    auto end = std::min(block.find('\n', start), block.size());
    out += roff(block.substr(start, end - start)) + "\n";
    start = end + 1;
  }
  return out + ".fi\n";
}

// "Title:\n  lines\n\nOther:\n ..." → a section per title, its lines kept as laid out.
std::string titled_blocks(std::string_view text) {
  std::string out, block;
  for (std::size_t start = 0; start < text.size();) {
    auto end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.front() != ' ' && line.back() == ':') {
      if (!block.empty()) out += no_fill(block), block.clear();
      std::string title(line.substr(0, line.size() - 1));
      for (char& ch : title) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      out += ".SH " + roff(title) + "\n";
    } else if (!line.empty() && line.front() != ' ') {
      if (!block.empty()) out += no_fill(block), block.clear();
      out += ".PP\n" + roff(line) + "\n";
    } else if (!line.empty()) {
      block += std::string(line) + "\n";
    }
  }
  if (!block.empty()) out += no_fill(block);
  return out;
}

std::string options_section() {
  std::string out = ".SH OPTIONS\n";
  std::optional<FlagGroup> group;
  for (const OptionSpec* row : flags_by_group()) {
    if (row->group != group) group = row->group, out += ".SS " + roff(group_title(row->group)) + "\n";
    std::string names;
    for (const auto& spelling : spellings(*row)) names += (names.empty() ? "" : ", ") + bold(spelling);
    out += ".TP\n" + names + (row->value_name.empty() ? "" : " \\fI" + roff(row->value_name) + "\\fR") + "\n";
    out += roff(row->help);
    if (!row->pet.empty()) out += " [" + roff(row->pet) + "]";
    if (!row->key.empty()) out += " (config key: " + roff(row->key) + ")";
    out += "\n";
  }
  return out;
}

std::string keys_section() {
  const LaunchConfig defaults;
  std::string out =
      ".SH CONFIGURATION KEYS\n"
      "A YAML file given with \\fB\\-\\-config\\fR sets any of these keys (nested ones as a mapping: "
      "timeout: {base_s: 60}); \\fB\\-\\-set\\fR \\fIKEY=VALUE\\fR sets one (nested ones dotted); flags override "
      "the file. configs/default.yaml lists them all (\\fBddplaunch \\-\\-print\\-default\\-config\\fR).\n";
  for (const OptionSpec& row : option_table()) {
    if (row.key.empty()) continue;
    out += ".TP\n" + bold(row.key) + ": " + roff(field_text(row.field, defaults)) + "\n";
    std::string doc(row.doc.empty() ? row.help : row.doc);
    for (char& ch : doc) ch = ch == '\n' ? ' ' : ch;
    out += roff(doc);
    if (auto facts = key_facts(row); !facts.empty()) out += " (" + roff(facts) + ")";
    out += "\n";
  }
  return out;
}

}  // namespace

std::string man_page(std::string_view version) {
  std::string_view intro = usage_intro();
  const auto first_line_end = intro.find('\n');
  std::string_view what = intro.substr(0, first_line_end);
  if (auto dash = what.find("— "); dash != std::string_view::npos) what = what.substr(dash + std::string_view("— ").size());
  std::string out = fmt::format(".TH DDPLAUNCH 1 \"\" \"ddplaunch {}\" \"User Commands\"\n", roff(version));
  out += ".SH NAME\nddplaunch \\- " + roff(what) + "\n";
  out += titled_blocks(intro.substr(first_line_end + 1));
  out += options_section();
  out += keys_section();
  out += titled_blocks(usage_footer());
  return out;
}

}  // namespace ddplaunch
