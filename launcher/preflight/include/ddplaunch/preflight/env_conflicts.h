// Variables of the torchrun contract that the user had set to something other than what
// the launcher computed: listed, then reported once as a warning (never silently replaced).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ddplaunch::preflight {

using EnvMap = std::map<std::string, std::string>;

struct EnvConflict {
  std::string key;
  std::string user_value;
  std::string launcher_value;
};

// RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LOCAL_WORLD_SIZE, GROUP_RANK.
const std::vector<std::string>& torchrun_contract_keys();

// For each key in `keys` (in that order) present in both maps with different values.
// A key the user set but the launcher does not set is not a conflict.
std::vector<EnvConflict> find_env_conflicts(const EnvMap& user_env, const EnvMap& computed_env,
                                            const std::vector<std::string>& keys = torchrun_contract_keys());

// One warning paragraph, "" when there is nothing to report. For rank-dependent keys the
// caller passes one worker's values (e.g. rank 0's) or dedupes across workers first.
std::string render_env_conflicts(const std::vector<EnvConflict>& conflicts);

}  // namespace ddplaunch::preflight
