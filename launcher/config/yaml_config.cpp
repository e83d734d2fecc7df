// YAML → LaunchConfig through the option table: its rows name the member each key sets,
// and a key that is no row is unknown, so configs/default.yaml (made from the same rows)
// and parsing cannot drift.
#include "config/yaml_config.h"

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "config/option_table.h"
#include "config/value_ranges.h"
#include "ddplaunch/base/overloaded.h"

namespace ddplaunch {

namespace {

// Reads a YAML value into the key's member. yaml-cpp throws on a value of the wrong type.
void set_field(const Field& field, const YAML::Node& n, LaunchConfig& c) {
  std::visit(
      Overloaded{
          [](std::monostate) {},
          [&](int& (*get)(LaunchConfig&)) { get(c) = n.as<int>(); },
          [&](double& (*get)(LaunchConfig&)) { get(c) = n.as<double>(); },
          [&](bool& (*get)(LaunchConfig&)) { get(c) = n.as<bool>(); },
          [&](std::string& (*get)(LaunchConfig&)) {
            // A scalar YAML may type as int or string ("auto" | 8): keep its text. Not a
            // null: `log_dir:` with nothing after it is a mistake, not the path "null".
            if (!n.IsScalar()) throw YAML::TypedBadConversion<std::string>(n.Mark());
            get(c) = n.Scalar();
          },
          [&](std::vector<int>& (*get)(LaunchConfig&)) { get(c) = n.as<std::vector<int>>(); },
          [&](ChoiceField choice) {
            if (!n.IsScalar()) throw YAML::TypedBadConversion<std::string>(n.Mark());
            if (!choice.set(c, n.Scalar())) throw YAML::ParserException(n.Mark(), "must be " + choice.choices());
          },
          [&](RestartOnField get) {
            if (!n.IsSequence()) throw YAML::TypedBadConversion<std::vector<std::string>>(n.Mark());
            RestartSettings& r = get(c);
            r.on_init_failure = r.on_runtime_failure = false;
            for (const auto& item : n) {
              auto kind = item.as<std::string>();
              if (kind == "init") r.on_init_failure = true;
              else if (kind == "runtime") r.on_runtime_failure = true;
              else
                throw YAML::ParserException(item.Mark(),
                                            fmt::format("restart_on entries are 'init' or 'runtime', not '{}'", kind));
            }
          },
      },
      field);
}

// Whether a top-level key is a section of nested keys ("timeout" of "timeout.base_s").
bool is_section(const std::string& key) {
  for (const OptionSpec& row : option_table())
    if (row.key.size() > key.size() && row.key.starts_with(key) && row.key[key.size()] == '.') return true;
  return false;
}

// "file.yaml:12" for files; just the source name for settings that have no line (CLI).
std::string where(const std::string& source, const YAML::Mark& mark) {
  if (mark.is_null()) return source;
  return fmt::format("{}:{}", source, mark.line + 1);
}

void apply_section(const YAML::Node& map, const std::string& section, const std::string& source,
                   LaunchConfig& config, std::vector<std::string>& errors) {
  std::map<std::string, YAML::Mark> seen;  // yaml-cpp keeps both entries of a repeated key
  for (const auto& entry : map) {
    const auto key = entry.first.as<std::string>();
    const std::string path = section.empty() ? key : section + "." + key;
    if (auto [first, fresh] = seen.emplace(key, entry.first.Mark()); !fresh) {
      errors.push_back(fmt::format("{}: key '{}' is given twice (first at line {}); keep one", where(source, entry.first.Mark()),
                                   path, first->second.line + 1));
      continue;
    }
    if (section.empty() && is_section(key)) {
      if (!entry.second.IsMap()) {
        errors.push_back(fmt::format("{}: '{}' must be a mapping of keys", where(source, entry.first.Mark()), key));
        continue;
      }
      apply_section(entry.second, key, source, config, errors);
      continue;
    }
    // A dotted name in a file ("timeout.base_s: 5") is no key: YAML nests it.
    const OptionSpec* row = key.find('.') == std::string::npos ? find_key(path) : nullptr;
    if (!row) {
      errors.push_back(fmt::format("{}: unknown key '{}' (see configs/default.yaml for every key)",
                                   where(source, entry.first.Mark()), path));
      continue;
    }
    if (entry.second.IsScalar())
      if (auto error = out_of_range(path, where(source, entry.second.Mark()) + ": " + path, entry.second.Scalar())) {
        errors.push_back(std::move(*error));
        continue;
      }
    try {
      set_field(row->field, entry.second, config);
    } catch (const YAML::Exception& e) {
      const std::string value = entry.second.IsScalar() ? entry.second.Scalar() : std::string("(not a scalar)");
      errors.push_back(fmt::format("{}: bad value '{}' for '{}': {}", where(source, entry.second.Mark()), value, path,
                                   e.msg));
    }
  }
}

}  // namespace

std::vector<std::string> apply_yaml(const std::string& yaml_text, const std::string& source, LaunchConfig& config) {
  std::vector<std::string> errors;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    errors.push_back(fmt::format("{}:{}: not valid YAML: {}", source, e.mark.line + 1, e.msg));
    return errors;
  }
  if (root.IsNull()) return errors;  // empty file: nothing to apply
  if (!root.IsMap()) {
    errors.push_back(fmt::format("{}: the top level must be a mapping of keys (see configs/default.yaml)", source));
    return errors;
  }
  LaunchConfig staged = config;  // apply all-or-nothing: a bad file changes nothing
  apply_section(root, "", source, staged, errors);
  if (errors.empty()) config = staged;
  return errors;
}

std::vector<std::string> apply_settings(const std::vector<std::pair<std::string, std::string>>& settings,
                                        const std::string& source, LaunchConfig& config) {
  YAML::Node root(YAML::NodeType::Map);
  for (const auto& [key, value] : settings) {
    YAML::Node value_node;
    if (const OptionSpec* row = find_key(key); row && is_list(row->field)) {  // "a,b" or YAML's flow form "[a, b]"
      value_node = YAML::Node(YAML::NodeType::Sequence);
      std::string items_text = value;
      if (items_text.size() >= 2 && items_text.front() == '[' && items_text.back() == ']')
        items_text = items_text.substr(1, items_text.size() - 2);
      std::stringstream items(items_text);
      for (std::string item; std::getline(items, item, ',');) {
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty()) value_node.push_back(item);
      }
    } else {
      value_node = YAML::Node(value);
    }
    auto dot = key.find('.');
    if (dot == std::string::npos) root[key] = value_node;
    else root[key.substr(0, dot)][key.substr(dot + 1)] = value_node;
  }
  std::vector<std::string> errors;
  LaunchConfig staged = config;
  apply_section(root, "", source, staged, errors);
  if (errors.empty()) config = staged;
  return errors;
}

std::vector<std::string> apply_yaml_file(const std::string& path, LaunchConfig& config) {
  // A directory opens and reads as empty: say so instead of running with the defaults.
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    return {fmt::format("config file '{}' is {}, not a YAML file: give --config the file itself", path,
                        S_ISDIR(info.st_mode) ? "a directory" : "not a regular file")};
  std::ifstream in(path);
  if (!in) return {fmt::format("cannot read config file '{}': check the path given to --config", path)};
  std::stringstream text;
  text << in.rdbuf();
  return apply_yaml(text.str(), path, config);
}

}  // namespace ddplaunch
