// torchrun launch lines, as the PyTorch docs print them, run unchanged by the real ddplaunch
// binary: a script runs under python, -m runs a module, --no_python runs a command, and
// PET_* variables stand in for flags. No torch needed: the scripts print their RANK.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "process_runner.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;

namespace {

constexpr auto kRunLimit = std::chrono::seconds(120);

struct Scratch {
  fs::path dir;
  Scratch() {
    char tmpl[] = "/tmp/ddplaunch_torchrun_lines_XXXXXX";
    dir = mkdtemp(tmpl);
    std::ofstream(dir / "script.py") << "import os, sys\n"
                                        "print('RANK=' + os.environ['RANK'] + ' WORLD=' + os.environ['WORLD_SIZE'] +\n"
                                        "      ' RUN_ID=' + os.environ['TORCHELASTIC_RUN_ID'] + ' ARGS=' + ','.join(sys.argv[1:]))\n";
    fs::create_directories(dir / "pkg");
    std::ofstream(dir / "pkg" / "__init__.py") << "";
    std::ofstream(dir / "pkg" / "mod.py") << "import os, sys\nprint('MODULE RANK=' + os.environ['RANK'] + ' ARGS=' + ','.join(sys.argv[1:]))\n";
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string script() const { return (dir / "script.py").string(); }
};

// A port no parallel test shares (dt::free_tcp_port).
int free_port() { return dt::free_tcp_port(); }

dt::RunResult run_launcher(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> argv{DDPLAUNCH_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return dt::run_command(argv, kRunLimit, env, {"PYTHON_EXEC", "PET_NNODES", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR",
                                                "PET_MASTER_PORT", "PET_NODE_RANK", "PET_RDZV_ENDPOINT"});
}

bool has(const std::string& output, const std::string& text) { return output.find(text) != std::string::npos; }

}  // namespace

TEST(TorchrunLines, StandaloneScript) {
  Scratch s;
  auto r = run_launcher({"--standalone", "--nnodes=1", "--nproc-per-node=2", s.script(), "--epochs", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 0] RANK=0 WORLD=2")) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 1] RANK=1 WORLD=2")) << r.output;
  EXPECT_TRUE(has(r.output, "ARGS=--epochs,1")) << r.output;
}

TEST(TorchrunLines, C10dRendezvousWithUnderscores) {
  Scratch s;
  const std::string endpoint = "127.0.0.1:" + std::to_string(free_port());
  auto r = run_launcher({"--nnodes=1", "--nproc_per_node=2", "--rdzv_backend=c10d", "--rdzv_endpoint=" + endpoint,
                         "--rdzv_id=abc", s.script()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 0] RANK=0 WORLD=2 RUN_ID=abc")) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 1] RANK=1 WORLD=2 RUN_ID=abc")) << r.output;
}

TEST(TorchrunLines, StaticMasterAddrAndPort) {
  Scratch s;
  auto r = run_launcher({"--nnodes", "1", "--node_rank", "0", "--master_addr", "127.0.0.1", "--master_port",
                         std::to_string(free_port()), "--nproc_per_node", "2", s.script()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 0] RANK=0 WORLD=2")) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 1] RANK=1 WORLD=2")) << r.output;
}

TEST(TorchrunLines, NoPythonCommand) {
  auto r = run_launcher({"--standalone", "--nproc_per_node=2", "--no_python", "/bin/sh", "-c", "echo SHELL RANK=$RANK"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 0] SHELL RANK=0")) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 1] SHELL RANK=1")) << r.output;
}

// torchrun's --local-ranks-filter: only local rank 1 on the terminal; rank 0's failure
// still reaches the root cause with its last line.
TEST(TorchrunLines, LocalRanksFilterShowsOnlyThoseRanks) {
  auto r = run_launcher({"--standalone", "--nproc_per_node=2", "--local-ranks-filter", "1", "--no_python", "/bin/sh",
                         "-c", "echo SHOWN RANK=$RANK; if [ $RANK = 0 ]; then sleep 0.5; exit 5; fi; sleep 2"});
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 1] SHOWN RANK=1")) << r.output;
  EXPECT_FALSE(has(r.output, "[rank 0] SHOWN RANK=0")) << r.output;
  EXPECT_TRUE(has(r.output, "    | SHOWN RANK=0")) << "rank 0's line belongs in the root cause\n" << r.output;
}

TEST(TorchrunLines, ModuleFromAPackage) {
  Scratch s;
  auto r = run_launcher({"--standalone", "--nproc-per-node", "2", "-m", "pkg.mod", "--flag"},
                        {{"PYTHONPATH", s.dir.string()}});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 0] MODULE RANK=0 ARGS=--flag")) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 1] MODULE RANK=1 ARGS=--flag")) << r.output;
}

TEST(TorchrunLines, PetVariablesStandInForFlags) {
  Scratch s;
  auto r = run_launcher({"--standalone", s.script()}, {{"PET_NPROC_PER_NODE", "2"}});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 1] RANK=1 WORLD=2")) << r.output;
  EXPECT_TRUE(has(r.output, "PET_NPROC_PER_NODE=2 from the environment")) << r.output;
}

TEST(TorchrunLines, RefusedAndMistypedFlagsExitWithConfigError) {
  auto elastic = run_launcher({"--nnodes=1:2", "--nproc_per_node=1", "--no_python", "/bin/true"});
  EXPECT_EQ(elastic.exit_code, 2) << elastic.output;
  EXPECT_TRUE(has(elastic.output, "a 2-node job needs the rendezvous endpoint")) << elastic.output;  // MIN:MAX accepted
  auto typo = run_launcher({"--nproc_per_nodd=2", "/bin/true"});
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_TRUE(has(typo.output, "did you mean --nproc-per-node?")) << typo.output;
}

namespace {
// The same c10d line started twice on one host (no --node_rank): the first launcher hosts
// the rendezvous, the second finds its port taken and joins as node 1 — not EADDRINUSE.
TEST(TorchrunLines, SameRendezvousLineTwiceOnOneHostFormsOneJob) {
  const std::string line = std::string(DDPLAUNCH_BIN) +
                           " --nnodes 2 --nproc_per_node 1 --rdzv_backend c10d --rdzv_endpoint 127.0.0.1:" +
                           std::to_string(free_port()) + " --rdzv_id twice --no_python /bin/sh -c 'echo JOINED RANK=$RANK'";
  auto r = dt::run_command({"/bin/sh", "-c", line + " & " + line + "; s=$?; wait $!; t=$?; exit $((s + t))"}, kRunLimit);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "] JOINED RANK=0")) << r.output;
  EXPECT_TRUE(has(r.output, "] JOINED RANK=1")) << r.output;
  EXPECT_TRUE(has(r.output, "joining it as a node")) << r.output;
  EXPECT_FALSE(has(r.output, "EADDRINUSE")) << r.output;
}
}  // namespace
