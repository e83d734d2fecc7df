// Detection and wording of user-set torchrun variables that the launcher overrides.
#include "ddplaunch/preflight/env_conflicts.h"

#include "ddplaunch/contract.h"

namespace ddplaunch::preflight {

const std::vector<std::string>& torchrun_contract_keys() {
  namespace c = ddplaunch::contract;
  static const std::vector<std::string> keys = {c::kRank,       c::kLocalRank,      c::kWorldSize, c::kMasterAddr,
                                                c::kMasterPort, c::kLocalWorldSize, c::kGroupRank};
  return keys;
}

std::vector<EnvConflict> find_env_conflicts(const EnvMap& user_env, const EnvMap& computed_env,
                                            const std::vector<std::string>& keys) {
  std::vector<EnvConflict> out;
  for (const auto& key : keys) {
    auto user = user_env.find(key);
    auto computed = computed_env.find(key);
    if (user == user_env.end() || computed == computed_env.end()) continue;
    if (user->second != computed->second) out.push_back({key, user->second, computed->second});
  }
  return out;
}

std::string render_env_conflicts(const std::vector<EnvConflict>& conflicts) {
  if (conflicts.empty()) return {};
  std::string text = "Your environment sets ";
  for (size_t i = 0; i < conflicts.size(); ++i) {
    const auto& c = conflicts[i];
    if (i > 0) text += (i + 1 == conflicts.size()) ? " and " : ", ";
    text += c.key + "=" + c.user_value + " (ddplaunch uses " + c.launcher_value + ")";
  }
  text += ". ddplaunch computes these for every worker from the rendezvous, the same way on every "
          "node, so the workers get ddplaunch's values. Unset them (or pass the intended values as "
          "ddplaunch options, e.g. --master, --nodes, --nproc-per-node) to silence this warning.";
  return text;
}

}  // namespace ddplaunch::preflight
