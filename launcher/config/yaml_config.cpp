// YAML → LaunchConfig. One table maps every key to the field it sets; the same table
// decides what counts as an unknown key, so documentation (configs/default.yaml) and
// parsing cannot drift without a test noticing.
#include "config/yaml_config.h"

#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "config/value_ranges.h"

namespace ddplaunch {

namespace {

using Setter = std::function<void(const YAML::Node&, LaunchConfig&)>;

template <typename T>
Setter set(T LaunchConfig::*field) {
  return [field](const YAML::Node& n, LaunchConfig& c) { c.*field = n.as<T>(); };
}
template <typename T>
Setter set_timeout(T TimeoutSettings::*field) {
  return [field](const YAML::Node& n, LaunchConfig& c) { c.timeout.*field = n.as<T>(); };
}
template <typename T>
Setter set_restart(T RestartSettings::*field) {
  return [field](const YAML::Node& n, LaunchConfig& c) { c.restart.*field = n.as<T>(); };
}

template <typename T>
Setter set_membership(T MembershipConfig::*field) {
  return [field](const YAML::Node& n, LaunchConfig& c) { c.membership.*field = n.as<T>(); };
}

template <typename T>
Setter set_hang(T HangSettings::*field) {
  return [field](const YAML::Node& n, LaunchConfig& c) { c.hang.*field = n.as<T>(); };
}

// A scalar that YAML may type as int or string ("auto" | 8): keep the text.
Setter set_text(std::string LaunchConfig::*field) {
  return [field](const YAML::Node& n, LaunchConfig& c) {
    if (!n.IsScalar()) throw YAML::TypedBadConversion<std::string>(n.Mark());
    c.*field = n.Scalar();
  };
}

Setter set_restart_on() {
  return [](const YAML::Node& n, LaunchConfig& c) {
    if (!n.IsSequence()) throw YAML::TypedBadConversion<std::vector<std::string>>(n.Mark());
    c.restart.on_init_failure = c.restart.on_runtime_failure = false;
    for (const auto& item : n) {
      auto kind = item.as<std::string>();
      if (kind == "init") c.restart.on_init_failure = true;
      else if (kind == "runtime") c.restart.on_runtime_failure = true;
      else throw YAML::ParserException(item.Mark(), fmt::format("restart_on entries are 'init' or 'runtime', not '{}'", kind));
    }
  };
}

const std::map<std::string, Setter>& top_level_keys() {
  static const std::map<std::string, Setter> keys{
      {"nodes", set(&LaunchConfig::nodes)},
      {"nproc_per_node", set_text(&LaunchConfig::nproc_per_node)},
      {"node_rank", set(&LaunchConfig::node_rank)},
      {"master", set(&LaunchConfig::master)},
      {"standalone", set(&LaunchConfig::standalone)},
      {"job_id", set(&LaunchConfig::job_id)},
      {"token", set(&LaunchConfig::token)},
      {"token_file", set(&LaunchConfig::token_file)},
      {"rendezvous_bind", set(&LaunchConfig::rendezvous_bind)},
      {"worker_port", set_text(&LaunchConfig::worker_port)},
      {"role", set(&LaunchConfig::role)},
      {"slurm", set(&LaunchConfig::slurm)},
      {"join_timeout_s", set(&LaunchConfig::join_timeout_s)},
      {"connect_timeout_s", set(&LaunchConfig::connect_timeout_s)},
      {"heartbeat_interval_s", set(&LaunchConfig::heartbeat_interval_s)},
      {"heartbeat_timeout_s", set(&LaunchConfig::heartbeat_timeout_s)},
      {"grace_s", set(&LaunchConfig::grace_s)},
      {"init_grace_s", set(&LaunchConfig::init_grace_s)},
      {"setup_timeout_s", set(&LaunchConfig::setup_timeout_s)},
      {"shim", set(&LaunchConfig::shim)},
      {"log_dir", set(&LaunchConfig::log_dir)},
      {"local_ranks_filter", set(&LaunchConfig::local_ranks_filter)},
      {"pause_ranks", set(&LaunchConfig::pause_ranks)},
      {"version_mismatch", set(&LaunchConfig::version_mismatch)},
      {"peer_probe", set(&LaunchConfig::peer_probe)},
  };
  return keys;
}

const std::map<std::string, Setter>& timeout_keys() {
  static const std::map<std::string, Setter> keys{
      {"base_s", set_timeout(&TimeoutSettings::base_s)},
      {"per_node_s", set_timeout(&TimeoutSettings::per_node_s)},
      {"dedicated_nic_s", set_timeout(&TimeoutSettings::dedicated_nic_s)},
      {"rtt_factor", set_timeout(&TimeoutSettings::rtt_factor)},
      {"min_s", set_timeout(&TimeoutSettings::min_s)},
      {"max_s", set_timeout(&TimeoutSettings::max_s)},
      {"restart_factor", set_timeout(&TimeoutSettings::restart_factor)},
  };
  return keys;
}

const std::map<std::string, Setter>& restart_keys() {
  static const std::map<std::string, Setter> keys{
      {"max_restarts", set_restart(&RestartSettings::max_restarts)},
      {"init_restarts", set_restart(&RestartSettings::init_restarts)},
      {"restart_on", set_restart_on()},
      {"backoff_s", set_restart(&RestartSettings::backoff_s)},
      {"backoff_max_s", set_restart(&RestartSettings::backoff_max_s)},
      {"jitter", set_restart(&RestartSettings::jitter)},
  };
  return keys;
}

const std::map<std::string, Setter>& membership_keys() {
  static const std::map<std::string, Setter> keys{
      {"min_nodes", set_membership(&MembershipConfig::min_nodes)},
      {"spares", set_membership(&MembershipConfig::spares)},
      {"last_call_s", set_membership(&MembershipConfig::last_call_s)},
      {"below_min_wait_s", set_membership(&MembershipConfig::below_min_wait_s)},
      {"exclude_after", set_membership(&MembershipConfig::exclude_after)},
      {"exclude_cooldown_s", set_membership(&MembershipConfig::exclude_cooldown_s)},
      {"max_changes", set_membership(&MembershipConfig::max_changes)},
  };
  return keys;
}

const std::map<std::string, Setter>& hang_keys() {
  static const std::map<std::string, Setter> keys{
      {"action", set(&LaunchConfig::hang_action)},
      {"warmup_steps", set_hang(&HangSettings::warmup_steps)},
      {"suspect_factor", set_hang(&HangSettings::suspect_factor)},
      {"suspect_floor_s", set_hang(&HangSettings::suspect_floor_s)},
      {"hang_factor", set_hang(&HangSettings::hang_factor)},
      {"hang_minimum_s", set_hang(&HangSettings::hang_minimum_s)},
      {"section_suspect_floor_s", set_hang(&HangSettings::section_suspect_floor_s)},
      {"section_hang_minimum_s", set_hang(&HangSettings::section_hang_minimum_s)},
      {"history_file", set(&LaunchConfig::history_file)},
  };
  return keys;
}

// The sections of keys below the top level.
const std::map<std::string, Setter>* section_keys(const std::string& key) {
  if (key == "timeout") return &timeout_keys();
  if (key == "restart") return &restart_keys();
  if (key == "hang") return &hang_keys();
  if (key == "membership") return &membership_keys();
  return nullptr;
}

// "file.yaml:12" for files; just the source name for settings that have no line (CLI).
std::string where(const std::string& source, const YAML::Mark& mark) {
  if (mark.is_null()) return source;
  return fmt::format("{}:{}", source, mark.line + 1);
}

void apply_section(const YAML::Node& map, const std::map<std::string, Setter>& keys, const std::string& section,
                   const std::string& source, LaunchConfig& config, std::vector<std::string>& errors) {
  std::map<std::string, YAML::Mark> seen;  // yaml-cpp keeps both entries of a repeated key
  for (const auto& entry : map) {
    const auto key = entry.first.as<std::string>();
    const std::string path = section.empty() ? key : section + "." + key;
    if (auto [first, fresh] = seen.emplace(key, entry.first.Mark()); !fresh) {
      errors.push_back(fmt::format("{}: key '{}' is given twice (first at line {}); keep one", where(source, entry.first.Mark()),
                                   path, first->second.line + 1));
      continue;
    }
    if (const auto* sub = section.empty() ? section_keys(key) : nullptr) {
      if (!entry.second.IsMap()) {
        errors.push_back(fmt::format("{}: '{}' must be a mapping of keys", where(source, entry.first.Mark()), key));
        continue;
      }
      apply_section(entry.second, *sub, key, source, config, errors);
      continue;
    }
    auto setter = keys.find(key);
    if (setter == keys.end()) {
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
      setter->second(entry.second, config);
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
  apply_section(root, top_level_keys(), "", source, staged, errors);
  if (errors.empty()) config = staged;
  return errors;
}

std::vector<std::string> apply_settings(const std::vector<std::pair<std::string, std::string>>& settings,
                                        const std::string& source, LaunchConfig& config) {
  static const std::set<std::string> list_keys{"pause_ranks", "local_ranks_filter", "restart.restart_on"};
  YAML::Node root(YAML::NodeType::Map);
  for (const auto& [key, value] : settings) {
    YAML::Node value_node;
    if (list_keys.count(key)) {  // "a,b" or YAML's flow form "[a, b]"
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
  apply_section(root, top_level_keys(), "", source, staged, errors);
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
