// Cross-node checks of the node facts, and doctor's table.
#include "policy/node_checks.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ddplaunch/preflight/resolve.h"
#include "ddplaunch/contract.h"

namespace ddplaunch {

NodeFactsVerdict check_node_facts(const std::vector<rendezvous::NodeRecord>& nodes, const std::string& master_addr,
                                  bool master_is_loopback, bool refuse_version_mismatch) {
  NodeFactsVerdict verdict;
  if (nodes.empty()) return verdict;
  std::vector<std::string> loopback_problems, differences;
  if (master_is_loopback && nodes.size() > 1) {
    for (const auto& n : nodes)
      if (!preflight::is_loopback(n.observed_address))
        loopback_problems.push_back(fmt::format(
            "the master address {} is loopback, but node {} ({}) joined from {}: on a multi-node job MASTER_ADDR "
            "must be node 0's routable address; pass --master <node 0's IP or name>:PORT",
            master_addr, n.node_rank, n.facts.hostname, n.observed_address));
  }
  const auto& reference = nodes.front();
  for (const auto& n : nodes) {
    auto compare = [&](const char* what, const std::string& mine, const std::string& theirs) {
      if (mine != theirs && !mine.empty() && !theirs.empty())
        differences.push_back(fmt::format("node {} ({}) has {} '{}' but node {} ({}) has '{}'", n.node_rank,
                                          n.facts.hostname, what, theirs, reference.node_rank,
                                          reference.facts.hostname, mine));
    };
    compare("program fingerprint", reference.facts.program_fingerprint, n.facts.program_fingerprint);
    compare("NCCL version", reference.facts.nccl_version, n.facts.nccl_version);
    compare("GPU driver version", reference.facts.driver_version, n.facts.driver_version);
  }
  std::vector<std::string> all = loopback_problems;
  all.insert(all.end(), differences.begin(), differences.end());
  if (all.empty()) return verdict;
  std::string text = fmt::format("{}", fmt::join(all, "\n  "));
  if (!loopback_problems.empty() || refuse_version_mismatch) verdict.refusal = text;
  else verdict.warning = "nodes differ (version_mismatch: warn):\n  " + text;
  return verdict;
}

std::string render_doctor_table(const std::vector<rendezvous::NodeRecord>& nodes, const std::map<int, DoctorRow>& rows,
                                int worker_port, const std::string& init_deadline_explained, bool all_ok,
                                const std::string& between) {
  const std::string row_format = "{:<5} {:<16} {:<16} {:<8} {:<6} {:<5} {:<5} {:<10} {:<6} {:<10} {:<9} {}\n";
  std::string table = fmt::format(fmt::runtime(row_format), "node", "host", "address", "nic", "port", "nproc", "gpus",
                                  "driver", "cuda", "nccl", "launcher", "verdict");
  auto or_dash = [](const std::string& v) { return v.empty() ? std::string("-") : v; };
  for (const auto& node : nodes) {
    auto row = rows.find(node.node_rank);
    if (row == rows.end()) continue;
    table += fmt::format(fmt::runtime(row_format), node.node_rank, node.facts.hostname, node.observed_address,
                         or_dash(row->second.nic), worker_port, node.facts.nproc, node.facts.gpu_count,
                         or_dash(node.facts.driver_version), or_dash(node.facts.cuda_version),
                         or_dash(node.facts.nccl_version),
                         or_dash(node.facts.launcher_version), row->second.ok ? "ok" : "FAIL: " + row->second.problems);
  }
  table += between;
  table += fmt::format("timeout: {}\n", init_deadline_explained);
  table += all_ok ? "doctor: the job would start.\n" : "doctor: the job would NOT start (see FAIL rows).\n";
  return table;
}

IfnameProblem judge_socket_ifname_problem(std::string_view variable, bool nccl_may_run) {
  return variable == contract::kNcclSocketIfname && !nccl_may_run ? IfnameProblem::WarnOnly : IfnameProblem::Refuse;
}

}  // namespace ddplaunch
