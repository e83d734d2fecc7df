// The worker environment contract: torchrun names and values, ddplaunch's own variables,
// and which user settings survive.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "ddplaunch/contract.h"
#include "env/torch_install.h"
#include "env/worker_environment.h"
#include "env/error_file.h"

using namespace ddplaunch;

namespace {
NodeAssignment two_node_assignment() {
  NodeAssignment a;
  a.node_rank = 1;
  a.node_count = 2;
  a.rank_offset = 4;
  a.world_size = 7;
  a.local_world_size = 3;
  a.master_addr = "10.0.0.5";
  a.master_port = 29500;
  a.init_deadline_s = 42.5;
  a.generation = Generation{2};
  a.max_restarts = 3;
  a.run_id = "job-1";
  a.job_id = "job-1";
  a.status_socket = "/tmp/x/status.sock";
  a.socket_ifname = "eth1";
  a.torch_version = "2.3.1+cu121";
  return a;
}
}  // namespace

TEST(WorkerEnvironment, TorchrunContractForEveryLocalRank) {
  NodeAssignment a = two_node_assignment();
  for (int local = 0; local < a.local_world_size; ++local) {
    Environment env = build_worker_environment({{"PATH", "/bin"}}, a, local);
    EXPECT_EQ(env.at("RANK"), std::to_string(4 + local));
    EXPECT_EQ(env.at("LOCAL_RANK"), std::to_string(local));
    EXPECT_EQ(env.at("ROLE_RANK"), std::to_string(4 + local));
    EXPECT_EQ(env.at("WORLD_SIZE"), "7");
    EXPECT_EQ(env.at("ROLE_WORLD_SIZE"), "7");
    EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "3");
    EXPECT_EQ(env.at("GROUP_RANK"), "1");
    EXPECT_EQ(env.at("GROUP_WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("PYTHON_EXEC"), "/usr/bin/python3");
    EXPECT_EQ(env.at("PYTHONUNBUFFERED"), "1");
    EXPECT_EQ(env.at("TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
    EXPECT_EQ(env.count("NCCL_ASYNC_ERROR_HANDLING"), 0u) << "torch 2.3 reads only the new name";
    EXPECT_EQ(env.at("TORCHELASTIC_ERROR_FILE"), "/tmp/x/error-rank" + std::to_string(4 + local) + "-gen2.json");
    EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.5");
    EXPECT_EQ(env.at("MASTER_PORT"), "29500");
    EXPECT_EQ(env.at("ROLE_NAME"), "default");
    EXPECT_EQ(env.at("TORCHELASTIC_RESTART_COUNT"), "2");
    EXPECT_EQ(env.at("TORCHELASTIC_MAX_RESTARTS"), "3");
    EXPECT_EQ(env.at("TORCHELASTIC_RUN_ID"), "job-1");
    EXPECT_EQ(env.at("TORCHELASTIC_USE_AGENT_STORE"), "False");
    EXPECT_EQ(env.at("OMP_NUM_THREADS"), "1");
    EXPECT_EQ(env.at("DDPLAUNCH_TIMEOUT_S"), "42.5");
    EXPECT_EQ(env.at("DDPLAUNCH_GENERATION"), "2");
    EXPECT_EQ(env.at("DDPLAUNCH_NODE_RANK"), "1");
    EXPECT_EQ(env.at("DDPLAUNCH_NODE_COUNT"), "2");
    EXPECT_EQ(env.at("DDPLAUNCH_STATUS_SOCKET"), "/tmp/x/status.sock");
    EXPECT_EQ(env.at("NCCL_SOCKET_IFNAME"), "eth1");
    EXPECT_EQ(env.at("GLOO_SOCKET_IFNAME"), "eth1");
    EXPECT_EQ(env.at("PATH"), "/bin");
  }
}

TEST(WorkerEnvironment, UserChoicesForThreadsAndInterfacesWin) {
  Environment base{{"OMP_NUM_THREADS", "8"}, {"NCCL_SOCKET_IFNAME", "ib0"}};
  Environment env = build_worker_environment(base, two_node_assignment(), 0);
  EXPECT_EQ(env.at("OMP_NUM_THREADS"), "8");
  EXPECT_EQ(env.at("NCCL_SOCKET_IFNAME"), "ib0");
  EXPECT_EQ(env.count("GLOO_SOCKET_IFNAME"), 0u) << "only injected when the user set neither";
}

TEST(WorkerEnvironment, LauncherValuesReplaceStaleContractVariables) {
  Environment base{{"RANK", "5"}, {"WORLD_SIZE", "99"}, {"MASTER_ADDR", "127.0.0.1"}};
  Environment env = build_worker_environment(base, two_node_assignment(), 0);
  EXPECT_EQ(env.at("RANK"), "4");
  EXPECT_EQ(env.at("WORLD_SIZE"), "7");
  EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.5");
}

TEST(WorkerEnvironment, NoInterfaceInjectedWhenNoneSelected) {
  NodeAssignment a = two_node_assignment();
  a.socket_ifname.clear();
  Environment env = build_worker_environment({}, a, 0);
  EXPECT_EQ(env.count("NCCL_SOCKET_IFNAME"), 0u);
  EXPECT_EQ(to_env_strings({{"A", "1"}, {"B", "x=y"}}), (std::vector<std::string>{"A=1", "B=x=y"}));
}

TEST(WorkerEnvironment, UserChoicesForBufferingAndNcclErrorHandlingWin) {
  Environment base{{"PYTHONUNBUFFERED", ""}, {"NCCL_ASYNC_ERROR_HANDLING", "0"}, {"PYTHON_EXEC", "/opt/py/bin/python"}};
  Environment env = build_worker_environment(base, two_node_assignment(), 0);
  EXPECT_EQ(env.at("PYTHONUNBUFFERED"), "");
  EXPECT_EQ(env.at("NCCL_ASYNC_ERROR_HANDLING"), "0");
  EXPECT_EQ(env.count("TORCH_NCCL_ASYNC_ERROR_HANDLING"), 0u) << "the user chose; no second opinion";
  EXPECT_EQ(env.at("PYTHON_EXEC"), "/opt/py/bin/python");
  NodeAssignment a = two_node_assignment();
  a.python_exec = "/venv/bin/python";
  EXPECT_EQ(build_worker_environment(base, a, 0).at("PYTHON_EXEC"), "/venv/bin/python");
}

TEST(WorkerEnvironment, AsyncErrorVariableFollowsTheTorchVersion) {
  NodeAssignment a = two_node_assignment();
  a.torch_version = "1.13.0a0";
  Environment old_torch = build_worker_environment({}, a, 0);
  EXPECT_EQ(old_torch.at("NCCL_ASYNC_ERROR_HANDLING"), "1");
  EXPECT_EQ(old_torch.count("TORCH_NCCL_ASYNC_ERROR_HANDLING"), 0u);
  a.torch_version = "";  // unknown: both, each torch reads its own
  Environment unknown = build_worker_environment({}, a, 0);
  EXPECT_EQ(unknown.at("NCCL_ASYNC_ERROR_HANDLING"), "1");
  EXPECT_EQ(unknown.at("TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
  EXPECT_EQ(torch_uses_torch_nccl_prefix("2.2.0"), true);
  EXPECT_EQ(torch_uses_torch_nccl_prefix("2.1.2+cu118"), false);
  EXPECT_EQ(torch_uses_torch_nccl_prefix("10.0"), true);
  EXPECT_EQ(torch_uses_torch_nccl_prefix("garbage"), std::nullopt);
}

TEST(WorkerEnvironment, FindsTorchVersionWithoutStartingPython) {
  // A fake venv: bin/python3.11 and lib/python3.11/site-packages/torch/version.py.
  const auto root = std::filesystem::temp_directory_path() / ("ddpl-venv-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "bin");
  std::filesystem::create_directories(root / "lib/python3.11/site-packages/torch");
  std::ofstream(root / "bin/python3.11") << "#!/bin/sh\n";
  std::ofstream(root / "lib/python3.11/site-packages/torch/version.py")
      << "from typing import Optional\n__version__ = '2.4.0+cu124'\ndebug = False\n";
  EXPECT_EQ(find_torch_version((root / "bin/python3.11").string(), {}), "2.4.0+cu124");
  // PYTHONPATH comes first, as in sys.path.
  std::filesystem::create_directories(root / "pp/torch");
  std::ofstream(root / "pp/torch/version.py") << "__version__ = \"1.12.1\"\n";
  EXPECT_EQ(find_torch_version((root / "bin/python3.11").string(), {{"PYTHONPATH", (root / "pp").string()}}),
            "1.12.1");
  EXPECT_EQ(find_torch_version((root / "bin/python3.9").string(), {}), std::nullopt);
  std::filesystem::remove_all(root);
  // This machine's own Python, when it has torch: the version torch itself reports.
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0) {
    auto found = find_torch_version("/usr/bin/python3", {});
    ASSERT_TRUE(found);
    std::string cmd = "/usr/bin/python3 -c 'import sys, torch; sys.exit(torch.__version__ != \"" + *found + "\")'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << "found " << *found;
  }
}

// The interpreter's name and version.py's line are matched by hand (a std::regex would
// cost every start a million instructions); the reference is the regular expressions they were.
TEST(WorkerEnvironment, TorchVersionMatchingIsTheRegularExpressionsItReplaced) {
  const auto root = std::filesystem::temp_directory_path() / ("ddpl-match-" + std::to_string(::getpid()));
  const std::regex line_re(R"(^__version__\s*=\s*['"]([^'"]+)['"])");
  for (const std::string line :
       {"__version__ = '2.4.0+cu124'", "__version__='1.13.0a0'", "__version__\t=\t\"2.1\"\r", "__version__ = ''",
        "__version__ = 'unterminated", "__version__ = \"mixed'", " __version__ = '1.0'", "__version__ == '1.0'",
        "__version__ = 1.0", "__version__ =   'a b'  # comment", "__version__2 = '1.0'", "version = '1.0'",
        "__version__ = '1'x'", ""}) {
    std::filesystem::create_directories(root / "pp/torch");
    std::ofstream(root / "pp/torch/version.py", std::ios::trunc) << line << "\n";
    std::smatch m;
    const std::optional<std::string> want =
        std::regex_search(line, m, line_re) ? std::optional<std::string>(m[1].str()) : std::nullopt;
    EXPECT_EQ(find_torch_version((root / "none/bin/python").string(), {{"PYTHONPATH", (root / "pp").string()}}), want)
        << "line: " << line;
  }
  std::filesystem::remove_all(root / "pp");
  const std::regex name_re(R"(python(\d+\.\d+))");
  for (const std::string name : {"python3.11", "python3", "python", "python3.", "python.11", "python3.11a", "python10.2",
                                 "Python3.11", "xpython3.11", "python3.11.2"}) {
    // The versioned name picks the user site ~/.local/lib/pythonX.Y/site-packages.
    const auto home = root / "home";
    std::filesystem::remove_all(home);
    std::smatch m;
    const bool versioned = std::regex_match(name, m, name_re);
    std::filesystem::create_directories(home / ".local/lib" / name / "site-packages/torch");  // found only if versioned
    std::ofstream(home / ".local/lib" / name / "site-packages/torch/version.py") << "__version__ = '9.9'\n";
    EXPECT_EQ(find_torch_version((root / "none/bin" / name).string(), {{"HOME", home.string()}}),
              versioned ? std::optional<std::string>("9.9") : std::nullopt)
        << "name: " << name;
  }
  std::filesystem::remove_all(root);
}

TEST(WorkerEnvironment, InheritedErrorFileIsNeverPassedOn) {
  Environment base{{"TORCHELASTIC_ERROR_FILE", "/outer/agent/error.json"}};
  Environment env = build_worker_environment(base, two_node_assignment(), 1);
  EXPECT_EQ(env.at("TORCHELASTIC_ERROR_FILE"), error_file_path("/tmp/x", 5, Generation{2}));
  NodeAssignment a = two_node_assignment();
  a.error_file_dir = "/run/errs";
  EXPECT_EQ(build_worker_environment(base, a, 0).at("TORCHELASTIC_ERROR_FILE"), "/run/errs/error-rank4-gen2.json");
  a.error_file_dir.clear();
  a.status_socket = "(created at start)";  // --dry-run: no directory yet
  EXPECT_EQ(build_worker_environment(base, a, 0).count("TORCHELASTIC_ERROR_FILE"), 0u);
}

TEST(WorkerEnvironment, RoleRanksAreCountedPerRoleAcrossNodes) {
  NodeAssignment a = two_node_assignment();
  auto single_role = build_worker_environment({}, a, 2);
  EXPECT_EQ(single_role["ROLE_RANK"], "6");  // one role: the global rank
  EXPECT_EQ(single_role["ROLE_WORLD_SIZE"], "7");
  a.role = "evaluator";
  a.role_rank_offset = 1;  // one evaluator worker on a lower node
  a.role_world_size = 4;
  auto env = build_worker_environment({}, a, 2);
  EXPECT_EQ(env["ROLE_NAME"], "evaluator");
  EXPECT_EQ(env["ROLE_RANK"], "3");
  EXPECT_EQ(env["ROLE_WORLD_SIZE"], "4");
  EXPECT_EQ(env["RANK"], "6");
}

// torchrun's --virtual-local-rank: LOCAL_RANK=0, CUDA_VISIBLE_DEVICES narrowed to one GPU.
TEST(WorkerEnvironment, VirtualLocalRankNarrowsToTheWorkersOwnGpu) {
  Environment unset{{"LOCAL_RANK", "2"}};
  narrow_to_own_gpu(unset, 2);
  EXPECT_EQ(unset["LOCAL_RANK"], "0");
  EXPECT_EQ(unset["CUDA_VISIBLE_DEVICES"], "2");  // no list inherited: the local rank's GPU
  Environment listed{{"CUDA_VISIBLE_DEVICES", "4, 6,GPU-abc"}};
  narrow_to_own_gpu(listed, 1);
  EXPECT_EQ(listed["CUDA_VISIBLE_DEVICES"], "6");  // the rank's entry of the inherited list
  narrow_to_own_gpu(listed = {{"CUDA_VISIBLE_DEVICES", "4,6,GPU-abc"}}, 2);
  EXPECT_EQ(listed["CUDA_VISIBLE_DEVICES"], "GPU-abc");
  EXPECT_EQ(virtual_local_rank_problem({}, 8), "");
  EXPECT_EQ(virtual_local_rank_problem({{"CUDA_VISIBLE_DEVICES", "0,1"}}, 2), "");
  EXPECT_NE(virtual_local_rank_problem({{"CUDA_VISIBLE_DEVICES", "0,1"}}, 3).find("3 workers need 3 entries"),
            std::string::npos);
}

// torch/version.py is looked for only when the command may start Python: a compiled program
// with no python word is not; a python word, a .py file, a script (a shebang may name python)
// or a program that cannot be read (unknown) is.
TEST(WorkerEnvironment, OnlyACommandThatMayStartPythonHasItsTorchLookedFor) {
  EXPECT_FALSE(may_start_python({"/bin/true"}));
  EXPECT_FALSE(may_start_python({"true"}));  // found on PATH: still /bin/true
  EXPECT_FALSE(may_start_python({"/usr/bin/env", "FOO=1", "/bin/true"}));
  EXPECT_TRUE(may_start_python({"/usr/bin/python3", "-u", "train.py"}));
  EXPECT_TRUE(may_start_python({"/usr/bin/env", "python3", "train.py"}));
  EXPECT_TRUE(may_start_python({"/usr/bin/numactl", "--cpunodebind=0", "/opt/venv/bin/python", "-m", "train"}));
  EXPECT_TRUE(may_start_python({"/bin/sh", "-c", "exec python3 train.py"}));
  const std::filesystem::path script = std::filesystem::temp_directory_path() / ("ddpl-script-" + std::to_string(getpid()));
  std::ofstream(script) << "#!/usr/bin/env python3\nprint('hi')\n";
  EXPECT_TRUE(may_start_python({script.string()})) << "a script may be Python";
  std::filesystem::remove(script);
  EXPECT_TRUE(may_start_python({"/no/such/program"})) << "unknown: looked for, as before";
}
