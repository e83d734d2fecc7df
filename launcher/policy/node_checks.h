// Cross-node checks the master makes once every node joined (loopback master on a
// multi-node job, differing program / NCCL / driver versions), and doctor's table.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch {

struct NodeFactsVerdict {
  std::string refusal;  // non-empty: the job cannot start
  std::string warning;  // non-empty: nodes differ, the job starts anyway (version_mismatch: warn)
};

NodeFactsVerdict check_node_facts(const std::vector<rendezvous::NodeRecord>& nodes, const std::string& master_addr,
                                  bool master_is_loopback, bool refuse_version_mismatch);

// A NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME that names no usable interface refuses the node,
// except NCCL_SOCKET_IFNAME on a node where NCCL cannot run (no GPU): a gloo job never reads
// it there, so it is only worth a warning.
enum class IfnameProblem { Refuse, WarnOnly };
IfnameProblem judge_socket_ifname_problem(std::string_view variable, bool nccl_may_run);

struct DoctorRow {
  bool ok = false;
  std::string nic;
  std::string problems;
};

// `between`: more rows printed after the node rows, before the timeout and the verdict (the
// peer probe's ring table, the run history's hosts); "" for none.
std::string render_doctor_table(const std::vector<rendezvous::NodeRecord>& nodes, const std::map<int, DoctorRow>& rows,
                                int worker_port, const std::string& init_deadline_explained, bool all_ok,
                                const std::string& between = "");

}  // namespace ddplaunch
