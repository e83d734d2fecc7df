// What integration tests that start real launchers share about the test's own environment:
// the variables that would change what the launcher does (unset for every launcher started),
// and whether the Python given can run torch.distributed (else those tests skip; the answer is
// kept across the suite's test processes).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "process_runner.h"

namespace ddplaunch::testing {

inline const std::vector<std::string> kLauncherEnvToUnset = {
    "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE",
    "LOCAL_RANK", "SLURM_JOB_ID", "SLURM_NODEID", "SLURM_STEP_ID", "PET_NNODES", "DDPLAUNCH_TOKEN"};

// Empty when `python` can import torch and torch.distributed, else why not (the tests that need
// them skip, saying it). The import is ~2 s of CPU and ctest runs each test in a process of its
// own, so a success is remembered for the next ones in a file named after the interpreter and
// torch's package file (its path, size and time): a torch installed, removed or changed since is
// probed afresh, and a failure is probed again each time.
inline std::string torch_missing_reason(const std::string& python) {
  static std::map<std::string, std::string> answered;  // per process
  if (auto it = answered.find(python); it != answered.end()) return it->second;
  namespace fs = std::filesystem;
  std::string& reason = answered[python];
  // Where torch would come from, without importing it (~20 ms).
  const RunResult where = run_command(
      {python, "-c", "import importlib.util as u; s = u.find_spec('torch'); print(s.origin if s and s.origin else '')"},
      std::chrono::seconds(60));
  std::string origin = where.output;
  while (!origin.empty() && (origin.back() == '\n' || origin.back() == '\r')) origin.pop_back();
  if (where.exit_code != 0 || origin.empty() || origin.find('\n') != std::string::npos) {
    reason = python + " finds no torch (exit " + std::to_string(where.exit_code) + "): " + where.output.substr(0, 300);
    return reason;
  }
  std::error_code ec;
  const auto size = fs::file_size(origin, ec);
  const auto changed = fs::last_write_time(origin, ec).time_since_epoch().count();
  const auto python_changed = fs::last_write_time(python, ec).time_since_epoch().count();
  const std::string key = python + "\n" + std::to_string(python_changed) + "\n" + origin + "\n" +
                          std::to_string(size) + "\n" + std::to_string(changed) + "\n";
  char name[32];
  std::snprintf(name, sizeof name, "%016zx", std::hash<std::string>{}(key));
  const fs::path remembered = fs::temp_directory_path() / ("ddplaunch-test-torch-" + std::to_string(::getuid())) / name;
  if (fs::exists(remembered, ec)) return reason;  // "": imported before
  const RunResult probe = run_command({python, "-c", "import torch, torch.distributed"}, std::chrono::seconds(120));
  if (probe.exit_code != 0) {
    reason = python + " cannot import torch.distributed (exit " + std::to_string(probe.exit_code) +
             (probe.timed_out ? ", timed out" : "") + "): " + probe.output.substr(0, 300);
    return reason;
  }
  fs::create_directories(remembered.parent_path(), ec);
  std::ofstream(remembered) << key;
  return reason;
}

inline bool torch_available(const std::string& python) { return torch_missing_reason(python).empty(); }

}  // namespace ddplaunch::testing
