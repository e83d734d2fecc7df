// Loads a LaunchConfig from a YAML file or string. Unknown keys and values of the wrong
// type are errors that name the key and its line, so a typo never silently does nothing.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/launch_config.h"

namespace ddplaunch {

// Applies the YAML document onto `config` (keys absent from the YAML keep their value).
// Returns one message per problem; `source` names the file in messages.
std::vector<std::string> apply_yaml(const std::string& yaml_text, const std::string& source, LaunchConfig& config);

// Applies "key=value" settings (keys as in YAML, nested ones dotted: "timeout.base_s";
// list keys take comma-separated values). Used for CLI flags and --set.
std::vector<std::string> apply_settings(const std::vector<std::pair<std::string, std::string>>& settings,
                                        const std::string& source, LaunchConfig& config);

// Reads the file, then apply_yaml. A missing/unreadable file is an error naming the path.
std::vector<std::string> apply_yaml_file(const std::string& path, LaunchConfig& config);

}  // namespace ddplaunch
