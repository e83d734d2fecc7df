// The range check every numeric config key's value passes wherever it comes in (a flag, its
// PET_* variable, YAML, --set, a Slurm hint), so `inf`, `nan`, negative or absurd values (a
// 1e300 s timeout, a 0.1 ms heartbeat) stop the start with the range. The ranges themselves
// are the option table's (option_table.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ddplaunch {

// nullopt when `text` is a number within the range of `key` (or `key` has none, or `text`
// is not a number: other checks name those). Otherwise the message, starting with
// `shown_as` (how the user wrote it: "--heartbeat-interval", "config.yaml:3: heartbeat_interval_s"):
// "--heartbeat-interval 0.0001 is out of range: allowed 0.05 to 60 seconds (YAML: heartbeat_interval_s)".
std::optional<std::string> out_of_range(std::string_view key, std::string_view shown_as, std::string_view text);

}  // namespace ddplaunch
