// The environment contract, written once. Values match torch.distributed.run for a
// single-role job so existing scripts work unchanged.
#include "env/worker_environment.h"

#include <csignal>
#include <filesystem>
#include <string_view>
#include <mutex>

#include <fmt/format.h>

#include "ddplaunch/contract.h"
#include "env/torch_install.h"
#include "env/error_file.h"

extern char** environ;

namespace ddplaunch {

namespace c = contract;

Environment current_environment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

namespace {

// find_torch_version once per interpreter: every worker of every generation asks.
std::optional<std::string> cached_torch_version(const std::string& python, const Environment& base) {
  static std::mutex mutex;
  static std::map<std::string, std::optional<std::string>> cache;
  auto get = [&](const char* name) {
    auto it = base.find(name);
    return it == base.end() ? std::string() : it->second;
  };
  std::string key = python + '\n' + get("PYTHONPATH") + '\n' + get("HOME") + '\n' + get("PATH");
  std::lock_guard lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, find_torch_version(python, base)).first;
  return it->second;
}

}  // namespace

std::string error_dir_of(const NodeAssignment& a) {
  if (!a.error_file_dir.empty()) return a.error_file_dir;
  std::filesystem::path socket(a.status_socket);
  return socket.is_absolute() ? socket.parent_path().string() : std::string();
}

Environment build_worker_environment(const Environment& base, const NodeAssignment& a, int local_rank) {
  Environment env = base;
  const int rank = a.rank_offset + local_rank;
  env[c::kMasterAddr] = a.master_addr;
  env[c::kMasterPort] = std::to_string(a.master_port);
  env[c::kRank] = std::to_string(rank);
  env[c::kLocalRank] = std::to_string(local_rank);
  env[c::kWorldSize] = std::to_string(a.world_size);
  env[c::kLocalWorldSize] = std::to_string(a.local_world_size);
  env[c::kGroupRank] = std::to_string(a.node_rank);
  env[c::kGroupWorldSize] = std::to_string(a.node_count);
  // torchrun counts role ranks per role across nodes; with one role they equal the global ones.
  env[c::kRoleRank] = std::to_string(a.role_rank_offset >= 0 ? a.role_rank_offset + local_rank : rank);
  env[c::kRoleWorldSize] = std::to_string(a.role_world_size > 0 ? a.role_world_size : a.world_size);
  env[c::kRoleName] = a.role;
  env[c::kRestartCount] = to_string(a.generation);
  env[c::kMaxRestarts] = std::to_string(a.max_restarts);
  env[c::kRunId] = a.run_id;
  env[c::kUseAgentStore] = "False";  // rank 0 hosts the c10d store on MASTER_PORT, not the launcher
  env.try_emplace(c::kOmpNumThreads, "1");
  env.try_emplace(c::kPythonUnbuffered, "1");
  const std::string python = a.python_exec.empty() ? default_python_exec(base) : a.python_exec;
  env[c::kPythonExec] = python;
  // As torchrun: async NCCL error handling on, under the name the workers' torch reads.
  if (!base.count(c::kTorchNcclAsyncErrorHandling) && !base.count(c::kNcclAsyncErrorHandling)) {
    auto version = a.torch_version ? a.torch_version : cached_torch_version(python, base);
    auto torch_nccl = version ? torch_uses_torch_nccl_prefix(*version) : std::nullopt;
    if (!torch_nccl || *torch_nccl) env[c::kTorchNcclAsyncErrorHandling] = "1";
    if (!torch_nccl || !*torch_nccl) env[c::kNcclAsyncErrorHandling] = "1";
  }
  // A fresh error file per rank and generation; an inherited one is an outer agent's.
  env.erase(c::kErrorFile);
  if (std::string dir = error_dir_of(a); !dir.empty()) env[c::kErrorFile] = error_file_path(dir, rank, a.generation);
  env[c::kTimeoutSeconds] = fmt::format("{:g}", a.init_deadline_s);
  env[c::kGeneration] = to_string(a.generation);
  env[c::kNodeRank] = std::to_string(a.node_rank);
  env[c::kNodeCount] = std::to_string(a.node_count);
  env[c::kJobId] = a.job_id;
  if (a.rendezvous_port > 0) env[c::kRendezvousPort] = std::to_string(a.rendezvous_port);
  if (!a.status_socket.empty()) env[c::kStatusSocket] = a.status_socket;
  // Where the Python shim's faulthandler writes stacks, and on which signal.
  if (std::filesystem::path socket(a.status_socket); socket.is_absolute()) {
    env[c::kStackDir] = socket.parent_path().string();
    env[c::kStackSignal] = std::to_string(SIGRTMIN + c::kStackSignalAboveRtMin);
  }
  // A user's explicit choice wins; we only fill in the NIC the rendezvous proved routes.
  if (!a.socket_ifname.empty() && !base.count(c::kNcclSocketIfname) && !base.count(c::kGlooSocketIfname)) {
    env[c::kNcclSocketIfname] = a.socket_ifname;
    env[c::kGlooSocketIfname] = a.socket_ifname;
  }
  return env;
}

namespace {
std::vector<std::string> visible_device_entries(const Environment& env) {
  std::vector<std::string> entries;
  auto it = env.find("CUDA_VISIBLE_DEVICES");
  if (it == env.end()) return entries;
  std::string_view list = it->second;
  while (true) {
    auto comma = list.find(',');
    std::string entry(list.substr(0, comma));
    entry.erase(0, entry.find_first_not_of(' '));
    entry.erase(entry.find_last_not_of(' ') + 1);
    entries.push_back(entry);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return entries;
}
}  // namespace

void narrow_to_own_gpu(Environment& env, int local_rank) {
  env["LOCAL_RANK"] = "0";
  if (env.count("CUDA_VISIBLE_DEVICES") == 0) {
    env["CUDA_VISIBLE_DEVICES"] = std::to_string(local_rank);
    return;
  }
  auto entries = visible_device_entries(env);
  if (static_cast<std::size_t>(local_rank) < entries.size())
    env["CUDA_VISIBLE_DEVICES"] = entries[static_cast<std::size_t>(local_rank)];
}

std::string virtual_local_rank_problem(const Environment& base, int nproc) {
  if (base.count("CUDA_VISIBLE_DEVICES") == 0) return {};
  auto entries = visible_device_entries(base);
  if (static_cast<int>(entries.size()) >= nproc) return {};
  return fmt::format("--virtual-local-rank gives each worker one entry of CUDA_VISIBLE_DEVICES={}, but {} workers "
                     "need {} entries: list more devices or lower --nproc-per-node",
                     base.at("CUDA_VISIBLE_DEVICES"), nproc, nproc);
}

std::vector<std::string> to_env_strings(const Environment& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace ddplaunch
