// Against a real two-node Slurm cluster on loopback (tests/clusters/slurm-test-cluster.sh):
// ddplaunch-srun starts one task per node, and each node's real srun environment gives
// consistent ClusterHints whose master name resolves (via scontrol NodeAddr) to 127.0.0.1.
// Skips, saying why, when not root, Slurm is not installed, or DDPLAUNCH_SKIP_SLURM_LIVE is set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "ddplaunch/cluster/cluster_hints.h"
#include "ddplaunch/cluster/host_address.h"

namespace fs = std::filesystem;
using namespace ddplaunch::cluster;

namespace {

const std::string kClusters = std::string(SOURCE_DIR) + "/tests/clusters";
const std::string kTools = std::string(SOURCE_DIR) + "/launcher/tools";

// Stops the cluster however the test ends.
struct ClusterGuard {
  fs::path dir;
  ~ClusterGuard() {
    std::string cmd = "timeout 60 " + kClusters + "/slurm-test-cluster.sh stop '" + dir.string() +
                      "' >/dev/null 2>&1";
    (void)std::system(cmd.c_str());
    fs::remove_all(dir);
  }
};

EnvMap read_env_file(const fs::path& path) {
  EnvMap env;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

}  // namespace

TEST(ClusterSlurmLive, TwoNodeStepGivesConsistentHints) {
  if (std::getenv("DDPLAUNCH_SKIP_SLURM_LIVE")) GTEST_SKIP() << "DDPLAUNCH_SKIP_SLURM_LIVE is set";
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run slurmd/munged";
  if (std::system("command -v slurmctld >/dev/null && command -v slurmd >/dev/null && "
                  "command -v srun >/dev/null && command -v munged >/dev/null") != 0)
    GTEST_SKIP() << "Slurm not installed (scripts/install-deps.sh --with-slurm)";

  ClusterGuard guard{fs::temp_directory_path() / ("cluster_slurm_live." + std::to_string(getpid()))};
  fs::create_directories(guard.dir);
  std::string start = "timeout 60 " + kClusters + "/slurm-test-cluster.sh start '" +
                      guard.dir.string() + "' > '" + guard.dir.string() + "/start.out' 2>&1";
  ASSERT_EQ(std::system(start.c_str()), 0) << "cluster did not start; see " << guard.dir;

  // A stand-in for ddplaunch: saves its node's environment and arguments.
  fs::path stub = guard.dir / "ddplaunch-stub";
  {
    std::ofstream f(stub);
    f << "#!/bin/sh\nenv > \"" << guard.dir.string() << "/env.$SLURM_NODEID\"\n"
      << "echo \"$*\" > \"" << guard.dir.string() << "/args.$SLURM_NODEID\"\n";
  }
  fs::permissions(stub, fs::perms::owner_all);
  std::string run = "SLURM_CONF='" + guard.dir.string() + "/slurm.conf' DDPLAUNCH='" +
                    stub.string() + "' timeout 60 " + kTools +
                    "/ddplaunch-srun -N 2 --ddplaunch-opt=--max-restarts=2 -- prog x > '" +
                    guard.dir.string() + "/srun.out' 2>&1";
  ASSERT_EQ(std::system(run.c_str()), 0) << "srun failed; see " << guard.dir << "/srun.out";

  std::set<int> ranks;
  std::optional<ClusterHints> first;
  for (int node = 0; node < 2; ++node) {
    SCOPED_TRACE("node " + std::to_string(node));
    EnvMap env = read_env_file(guard.dir / ("env." + std::to_string(node)));
    ASSERT_TRUE(detect_slurm_step(env));
    ClusterHints h = read_slurm_hints(env);
    ASSERT_TRUE(h.ok()) << *h.error;
    EXPECT_EQ(h.source, "slurm");
    EXPECT_EQ(h.nodes, 2);
    EXPECT_EQ(h.master_host, "n1");
    ranks.insert(*h.node_rank);
    if (first) {
      EXPECT_EQ(h.job_id, first->job_id);
      EXPECT_EQ(h.rendezvous_port, first->rendezvous_port);
      EXPECT_EQ(h.worker_port, first->worker_port);
    } else {
      first = h;
    }
    std::ifstream args(guard.dir / ("args." + std::to_string(node)));
    std::string line;
    std::getline(args, line);
    EXPECT_EQ(line, "--slurm --max-restarts=2 -- prog x");
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1}));

  // "n1" is not in DNS here; Slurm's NodeAddr (127.0.0.1) is found through scontrol.
  setenv("SLURM_CONF", (guard.dir / "slurm.conf").c_str(), 1);
  HostAddress a = resolve_slurm_host("n1");
  unsetenv("SLURM_CONF");
  ASSERT_TRUE(a.ok()) << *a.error;
  EXPECT_EQ(a.address, "127.0.0.1");
}
