// Slurm environment maps -> ClusterHints: the values taken, the derived
// ports, and the errors for missing, non-numeric or inconsistent variables.
#include <gtest/gtest.h>

#include <set>

#include "ddplaunch/cluster/cluster_hints.h"

using namespace ddplaunch::cluster;

namespace {

// What srun sets on the second node of `srun -N 2` in job 1234, step 5.
EnvMap slurm_step_env() {
  return {{"SLURM_JOB_ID", "1234"},         {"SLURM_STEP_ID", "5"},
          {"SLURM_NODEID", "1"},            {"SLURM_STEP_NUM_NODES", "2"},
          {"SLURM_NNODES", "2"},            {"SLURM_JOB_NUM_NODES", "4"},
          {"SLURM_STEP_NODELIST", "n[07-08]"}, {"SLURM_JOB_NODELIST", "n[05-08]"},
          {"SLURM_PROCID", "1"}};
}

void expect_error_mentions(const ClusterHints& h, std::initializer_list<const char*> parts) {
  ASSERT_TRUE(h.error.has_value()) << "expected an error";
  for (const char* p : parts) EXPECT_NE(h.error->find(p), std::string::npos) << *h.error;
}

}  // namespace

TEST(ClusterHints, SlurmStepGivesNodesRankMasterJobAndPorts) {
  EnvMap env = slurm_step_env();
  ASSERT_TRUE(detect_slurm_step(env));
  ClusterHints h = read_slurm_hints(env);
  ASSERT_TRUE(h.ok()) << *h.error;
  EXPECT_EQ(h.source, "slurm");
  EXPECT_EQ(h.nodes, 2);
  EXPECT_EQ(h.node_rank, 1);
  EXPECT_EQ(h.master_host, "n07");
  EXPECT_EQ(h.job_id, "1234.5");
  EXPECT_EQ(h.rendezvous_port, slurm_rendezvous_port(1234, 5));
  EXPECT_EQ(h.worker_port, slurm_worker_port(1234, 5));
  EXPECT_FALSE(h.nproc_per_node.has_value());
  // The formula documented in cluster_hints.h.
  EXPECT_EQ(*h.rendezvous_port, 29500 + 2 * int((1234 * 131 + 5) % 1634));
  EXPECT_TRUE(h.notes.empty());
  EXPECT_EQ(h.source, "slurm");
}

TEST(ClusterHints, SlurmFallbacksAndGpus) {
  EnvMap env = slurm_step_env();
  env.erase("SLURM_STEP_ID");
  env["SLURM_STEPID"] = "0";
  env.erase("SLURM_STEP_NUM_NODES");
  env.erase("SLURM_NNODES");  // falls back to SLURM_JOB_NUM_NODES=4
  env.erase("SLURM_STEP_NODELIST");
  env["SLURM_GPUS_ON_NODE"] = "8";
  ASSERT_TRUE(detect_slurm_step(env));
  ClusterHints h = read_slurm_hints(env);
  ASSERT_TRUE(h.ok()) << *h.error;
  EXPECT_EQ(h.nodes, 4);
  EXPECT_EQ(h.master_host, "n05");
  EXPECT_EQ(h.job_id, "1234.0");
  EXPECT_EQ(h.nproc_per_node, 8);
  ASSERT_EQ(h.notes.size(), 1u);
  EXPECT_NE(h.notes[0].find("SLURM_JOB_NODELIST"), std::string::npos);

  env["SLURM_GPUS_ON_NODE"] = "0";
  h = read_slurm_hints(env);
  ASSERT_TRUE(h.ok());
  EXPECT_FALSE(h.nproc_per_node.has_value());
}

TEST(ClusterHints, SlurmDetection) {
  EnvMap env = slurm_step_env();
  env.erase("SLURM_STEP_ID");
  EXPECT_FALSE(detect_slurm_step(env));  // e.g. inside an sbatch script, not a step
  env = slurm_step_env();
  env.erase("SLURM_NODEID");
  EXPECT_FALSE(detect_slurm_step(env));
  EXPECT_FALSE(detect_slurm_step({}));
  EXPECT_FALSE(detect_slurm_step({{"HOME", "/root"}}));
}

TEST(ClusterHints, SlurmErrorsNameTheVariableAndValue) {
  struct Case {
    const char* var;
    const char* value;  // nullptr = erase
    std::initializer_list<const char*> mentions;
  };
  const Case cases[] = {
      {"SLURM_NODEID", "2", {"SLURM_NODEID=2", "node count 2", "SLURM_STEP_NUM_NODES=2"}},
      {"SLURM_NODEID", "one", {"SLURM_NODEID=\"one\"", "not a non-negative whole number"}},
      {"SLURM_NODEID", "-1", {"SLURM_NODEID=\"-1\""}},
      {"SLURM_JOB_ID", "12x", {"SLURM_JOB_ID=\"12x\""}},
      {"SLURM_JOB_ID", "99999999999", {"SLURM_JOB_ID=\"99999999999\"", "out of range"}},
      {"SLURM_STEP_ID", "batch", {"SLURM_STEP_ID=\"batch\""}},
      {"SLURM_STEP_NUM_NODES", "0", {"SLURM_STEP_NUM_NODES=0"}},
      {"SLURM_STEP_NUM_NODES", "3", {"SLURM_STEP_NODELIST=n[07-08]", "names 2 hosts", "3"}},
      {"SLURM_STEP_NODELIST", "n[07-", {"SLURM_STEP_NODELIST", "unbalanced"}},
      {"SLURM_GPUS_ON_NODE", "eight", {"SLURM_GPUS_ON_NODE=\"eight\""}},
      {"SLURM_JOB_ID", nullptr, {"SLURM_JOB_ID is unset", "srun"}},
      {"SLURM_NODEID", nullptr, {"SLURM_NODEID is unset"}},
  };
  for (const auto& c : cases) {
    EnvMap env = slurm_step_env();
    if (c.value)
      env[c.var] = c.value;
    else
      env.erase(c.var);
    SCOPED_TRACE(std::string(c.var) + "=" + (c.value ? c.value : "(unset)"));
    expect_error_mentions(read_slurm_hints(env), c.mentions);
  }
  EnvMap env = slurm_step_env();
  env.erase("SLURM_STEP_NODELIST");
  env.erase("SLURM_JOB_NODELIST");
  expect_error_mentions(read_slurm_hints(env), {"SLURM_STEP_NODELIST", "unset"});
}

TEST(ClusterHints, SlurmPortsAreNonZeroDistinctDeterministicAndSpread) {
  std::set<int> seen;
  for (std::uint64_t job : {0ull, 1ull, 1633ull, 1634ull, 4294967295ull, 123456789ull}) {
    for (std::uint64_t step : {0ull, 1ull, 2ull, 4294967294ull}) {
      int r = slurm_rendezvous_port(job, step);
      int w = slurm_worker_port(job, step);
      EXPECT_GE(r, 29500);
      EXPECT_LE(w, 32767);
      EXPECT_NE(r, w);
      EXPECT_EQ(r % 2, 0);  // rendezvous even, worker odd: no step's pair overlaps another's
      EXPECT_EQ(r, slurm_rendezvous_port(job, step));
      seen.insert(r);
    }
  }
  // Consecutive jobs and steps get different ports.
  EXPECT_NE(slurm_rendezvous_port(1000, 0), slurm_rendezvous_port(1001, 0));
  EXPECT_NE(slurm_rendezvous_port(1000, 0), slurm_rendezvous_port(1000, 1));
  EXPECT_GT(seen.size(), 10u);
}
