// Node facts and shim environment.
#include "node_facts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "ddplaunch/preflight/interfaces.h"
#include "file_fingerprint.h"
#include "shim_paths.h"
#include "env/program_path.h"

namespace ddplaunch {

std::string local_hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string program_fingerprint(const std::vector<std::string>& program) {
  std::string fp;
  for (std::size_t i = 0; i < program.size() && i < 2; ++i) {
    std::string path = i == 0 ? find_program(program[0]) : program[i];
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    fp += (fp.empty() ? "" : "+") + file_fingerprint(path);
  }
  return fp;
}

rendezvous::NodeFacts gather_node_facts(const LaunchConfig& config, int nproc, const preflight::GpuInfo& gpus) {
  rendezvous::NodeFacts facts;
  facts.hostname = local_hostname();
  if (auto interfaces = preflight::list_interfaces())
    for (const auto& i : *interfaces)
      if (!i.loopback && i.up)
        for (const auto& a : i.ipv4) facts.addresses.push_back(a);
  facts.requested_node_rank = config.node_rank;
  facts.expected_nodes = config.nodes;
  facts.role = config.role;
  facts.nproc = nproc;
  facts.gpu_count = gpus.count;
  facts.launcher_version = DDPLAUNCH_VERSION;
  facts.program_fingerprint = program_fingerprint(config.program);
  facts.driver_version = gpus.driver_version;
  facts.cuda_version = gpus.cuda_version;
  facts.nccl_version = gpus.nccl_version;
  return facts;
}

std::vector<std::string> add_shim_environment(ShimChoice shim, const std::vector<std::string>& program,
                                              Environment& env) {
  std::vector<std::string> notes;
  auto prepend = [&](const char* variable, const std::string& value, char separator) {
    auto it = env.find(variable);
    env[variable] = it == env.end() || it->second.empty() ? value : value + separator + it->second;
  };
  const bool want_preload = shim == ShimChoice::Preload || (shim == ShimChoice::Auto && DDPLAUNCH_BUILT_WITH_NCCL);
  // Always with auto: Python may be started by anything (a shebang script, `env python3`, a
  // shell wrapper, `python -m`), and a non-Python program never reads PYTHONPATH.
  (void)program;
  const bool want_python = shim == ShimChoice::Python || shim == ShimChoice::Auto;
  const ShimPaths shims = locate_shims();
  if (want_preload) {
    if (access(shims.preload_lib.c_str(), R_OK) == 0) prepend("LD_PRELOAD", shims.preload_lib, ':');
    else notes.push_back(fmt::format("shim: {} is missing; NCCL init will not be reported", shims.preload_lib));
  }
  if (want_python) prepend("PYTHONPATH", shims.python_autoload_dir, ':');
  return notes;
}

}  // namespace ddplaunch
