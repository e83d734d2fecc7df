// Reading typed values out of an environment map with user-facing errors.
// Private to ddplaunch_cluster (the Slurm reader uses it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ddplaunch/cluster/cluster_hints.h"

namespace ddplaunch::cluster::env_values {

// The value of `name`, or nullopt when unset. An empty value counts as unset.
std::optional<std::string> get(const EnvMap& env, const char* name);

// Parses a whole non-negative decimal number no larger than `max`. On failure returns
// nullopt and sets `error` to "<name>=<value> is not ...; <why>".
std::optional<std::uint64_t> parse_count(const char* name, const std::string& value,
                                         std::uint64_t max, std::string& error);

}  // namespace ddplaunch::cluster::env_values
