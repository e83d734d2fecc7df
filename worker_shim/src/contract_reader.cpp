// read_contract(): turns the worker's environment into a validated WorkerContract, or an
// error listing every variable at fault with its value, so a worker started by hand (not
// by ddplaunch or torchrun) fails at once with a clear message instead of hanging in init.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "ddplaunch/shim.h"

extern char** environ;

namespace ddplaunch::shim {
namespace {

namespace c = ddplaunch::contract;
using Env = std::map<std::string, std::string>;

// Collects problems so that one run names all of them, not just the first.
struct Problems {
  std::vector<std::string> items;
  void add(std::string s) { items.push_back(std::move(s)); }
};

std::string shown(const std::string& value) { return "\"" + value + "\""; }

const std::string* find(const Env& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

// Reads an integer variable. Missing: error when required, else `fallback`.
std::optional<long long> read_int(const Env& env, const char* name, bool required,
                                  Problems& problems) {
  const std::string* value = find(env, name);
  if (!value) {
    if (required) problems.add(std::string(name) + " is not set");
    return std::nullopt;
  }
  long long out = 0;
  if (!c::detail::parse_int(std::string_view(*value), out)) {
    problems.add(std::string(name) + "=" + shown(*value) + " is not an integer");
    return std::nullopt;
  }
  return out;
}

std::optional<double> read_seconds(const Env& env, const char* name, Problems& problems) {
  const std::string* value = find(env, name);
  if (!value) return std::nullopt;
  const char* begin = value->c_str();
  char* end = nullptr;
  double out = std::strtod(begin, &end);
  if (value->empty() || end != begin + value->size() || !std::isfinite(out)) {
    problems.add(std::string(name) + "=" + shown(*value) + " is not a number of seconds");
    return std::nullopt;
  }
  if (out <= 0) {
    problems.add(std::string(name) + "=" + shown(*value) + " must be greater than 0 seconds");
    return std::nullopt;
  }
  return out;
}

// Checks lo <= v <= hi and narrows to int.
bool in_range(const char* name, long long v, long long lo, long long hi, const std::string& why,
              Problems& problems) {
  if (v >= lo && v <= hi) return true;
  problems.add(std::string(name) + "=" + std::to_string(v) + " is out of range: " + why);
  return false;
}

Env process_environment() {
  Env env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

}  // namespace

ContractResult read_contract() { return read_contract(process_environment()); }

ContractResult read_contract(const Env& env) {
  Problems problems;
  WorkerContract w;
  constexpr long long kIntMax = 2147483647;

  // torchrun-compatible variables: required.
  if (const std::string* addr = find(env, c::kMasterAddr)) {
    if (addr->empty()) problems.add(std::string(c::kMasterAddr) + " is set but empty");
    w.master_addr = *addr;
  } else {
    problems.add(std::string(c::kMasterAddr) + " is not set");
  }
  auto port = read_int(env, c::kMasterPort, true, problems);
  auto rank = read_int(env, c::kRank, true, problems);
  auto local_rank = read_int(env, c::kLocalRank, true, problems);
  auto world = read_int(env, c::kWorldSize, true, problems);
  auto local_world = read_int(env, c::kLocalWorldSize, true, problems);

  if (port && in_range(c::kMasterPort, *port, 1, 65535, "a TCP port is 1..65535", problems))
    w.master_port = static_cast<int>(*port);
  bool world_ok = world && in_range(c::kWorldSize, *world, 1, kIntMax, "it must be at least 1", problems);
  bool local_world_ok =
      local_world &&
      in_range(c::kLocalWorldSize, *local_world, 1, world_ok ? *world : kIntMax,
               world_ok ? "it must be 1.." + std::to_string(*world) + " (WORLD_SIZE=" +
                              std::to_string(*world) + ")"
                        : std::string("it must be at least 1"),
               problems);
  if (world_ok) w.world_size = static_cast<int>(*world);
  if (local_world_ok) w.local_world_size = static_cast<int>(*local_world);
  if (rank && world_ok &&
      in_range(c::kRank, *rank, 0, *world - 1,
               "it must be 0.." + std::to_string(*world - 1) + " (WORLD_SIZE=" +
                   std::to_string(*world) + ")",
               problems))
    w.rank = static_cast<int>(*rank);
  if (local_rank && local_world_ok &&
      in_range(c::kLocalRank, *local_rank, 0, *local_world - 1,
               "it must be 0.." + std::to_string(*local_world - 1) + " (LOCAL_WORLD_SIZE=" +
                   std::to_string(*local_world) + ")",
               problems))
    w.local_rank = static_cast<int>(*local_rank);

  // ddplaunch's own variables: optional, with torchrun-derived defaults.
  auto node_count = read_int(env, c::kNodeCount, false, problems);
  if (!node_count && !find(env, c::kNodeCount) && world_ok && local_world_ok &&
      *world % *local_world == 0)
    node_count = *world / *local_world;  // torchrun: homogeneous nodes
  if (node_count &&
      in_range(c::kNodeCount, *node_count, 1, kIntMax, "it must be at least 1", problems))
    w.node_count = static_cast<int>(*node_count);

  const char* node_rank_name = find(env, c::kNodeRank) ? c::kNodeRank : c::kGroupRank;
  auto node_rank = read_int(env, node_rank_name, false, problems);
  if (node_rank &&
      in_range(node_rank_name, *node_rank, 0, w.node_count - 1,
               "it must be 0.." + std::to_string(w.node_count - 1) + " (node count " +
                   std::to_string(w.node_count) + ")",
               problems))
    w.node_rank = static_cast<int>(*node_rank);

  auto generation = read_int(env, c::kGeneration, false, problems);
  if (generation && in_range(c::kGeneration, *generation, 0, kIntMax, "it must be 0 or more", problems))
    w.generation = static_cast<c::GenerationNumber>(*generation);

  if (auto timeout = read_seconds(env, c::kTimeoutSeconds, problems)) w.timeout_s = *timeout;
  if (const std::string* s = find(env, c::kStatusSocket)) w.status_socket = *s;
  if (const std::string* id = find(env, c::kJobId)) w.job_id = *id;
  else if (const std::string* run_id = find(env, c::kRunId)) w.job_id = *run_id;

  ContractResult result;
  if (problems.items.empty()) {
    result.contract = std::move(w);
    return result;
  }
  result.error = "this worker's distributed environment is invalid: ";
  for (std::size_t i = 0; i < problems.items.size(); ++i) {
    if (i) result.error += "; ";
    result.error += problems.items[i];
  }
  result.error +=
      ". To fix: start this program with ddplaunch or torchrun, which set these variables for every "
      "worker (e.g. `ddplaunch --nproc-per-node 2 -- <program>`).";
  return result;
}

}  // namespace ddplaunch::shim
