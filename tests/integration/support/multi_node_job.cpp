// Nodes of one ddplaunch job for integration tests (see multi_node_job.h): command lines, node 0
// first, bounded waits.
#include "multi_node_job.h"

#include <gtest/gtest.h>

namespace ddplaunch::testing {

MultiNodeJob new_loopback_job(const std::string& launcher, int nodes, const std::string& job_id,
                              const std::vector<std::string>& flags) {
  MultiNodeJob job;
  job.launcher = launcher;
  job.nodes = nodes;
  job.port = free_tcp_port();
  job.job_id = job_id;
  job.flags = kLoopbackJobFlags;
  job.flags.insert(job.flags.end(), flags.begin(), flags.end());
  EXPECT_GT(job.port, 0) << "no free TCP port on 127.0.0.1 for the rendezvous";
  return job;
}

std::vector<std::string> node_argv(const MultiNodeJob& job, int node_rank, int nproc,
                                   const std::vector<std::string>& node_flags,
                                   const std::vector<std::string>& program) {
  std::vector<std::string> argv{job.launcher,   "--nodes",    std::to_string(job.nodes), "--nproc-per-node",
                                std::to_string(nproc), "--master", job.master(),           "--node-rank",
                                std::to_string(node_rank)};
  if (!job.job_id.empty()) argv.insert(argv.end(), {"--job-id", job.job_id});
  argv.insert(argv.end(), job.flags.begin(), job.flags.end());
  argv.insert(argv.end(), node_flags.begin(), node_flags.end());  // later flags win
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

std::unique_ptr<BackgroundProcess> start_node(const std::vector<std::string>& argv) {
  auto p = std::make_unique<BackgroundProcess>();
  EXPECT_TRUE(p->start(argv)) << p->output_so_far();
  return p;
}

bool wait_listening(const BackgroundProcess& node0, std::chrono::milliseconds timeout) {
  return node0.wait_for_output("hosting the rendezvous on port", timeout);
}

std::vector<RunResult> wait_all(std::vector<std::unique_ptr<BackgroundProcess>>& nodes,
                                std::chrono::milliseconds bound) {
  std::vector<RunResult> results;
  for (auto& n : nodes) {
    results.push_back(n->wait(bound));
    EXPECT_FALSE(results.back().timed_out) << "node " << results.size() - 1 << " hung:\n" << results.back().output;
  }
  return results;
}

std::vector<RunResult> run_job_nodes(const std::vector<std::vector<std::string>>& argv_by_node,
                                 std::chrono::milliseconds bound) {
  std::vector<std::unique_ptr<BackgroundProcess>> nodes;
  for (std::size_t r = 0; r < argv_by_node.size(); ++r) {
    nodes.push_back(start_node(argv_by_node[r]));
    if (r == 0 && !wait_listening(*nodes[0])) {
      ADD_FAILURE() << "node 0 never listened:\n" << nodes[0]->output_so_far();
      return {};
    }
  }
  return wait_all(nodes, bound);
}

}  // namespace ddplaunch::testing
