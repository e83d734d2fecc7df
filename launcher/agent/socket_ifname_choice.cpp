// The socket interface of NCCL and gloo, and the doctor's node report: see socket_ifname_choice.h.
#include "agent/socket_ifname_choice.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "ddplaunch/contract.h"
#include "ddplaunch/preflight/interfaces.h"
#include "ddplaunch/preflight/socket_ifname.h"
#include "policy/node_checks.h"

namespace ddplaunch {

std::string choose_socket_ifname(const NodePlan& plan, const std::string& local_address,
                                 const std::string& probe_ifname, std::string& selected) {
  if (plan.config.nodes <= 1) return {};
  auto interfaces = preflight::list_interfaces();
  if (!interfaces) return "cannot list network interfaces: " + interfaces.error;
  std::string route = preflight::interface_for_address(local_address, *interfaces).value_or("");
  bool user_set = false;
  for (const char* variable : {contract::kNcclSocketIfname, contract::kGlooSocketIfname}) {
    auto it = plan.base_env.find(variable);
    if (it == plan.base_env.end()) continue;
    user_set = true;
    auto outcome = preflight::check_socket_ifname(variable, it->second, *interfaces, route, plan.master_ip);
    if (!outcome && judge_socket_ifname_problem(variable, plan.nccl_may_run) == IfnameProblem::WarnOnly) {
      spdlog::warn("{} (ignored: this node has no GPU, so NCCL does not run here; fix or unset {} before "
                   "running on GPU nodes)",
                   outcome.message, variable);
      continue;
    }
    if (!outcome) return outcome.message;
  }
  if (!user_set && !probe_ifname.empty()) {
    selected = probe_ifname;
    spdlog::info("NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME unset: using {}, the interface the peer probe found working "
                 "between every pair of neighbouring nodes",
                 probe_ifname);
  } else if (!user_set && !route.empty()) {
    selected = route;
    spdlog::info("NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME unset: using {} ({}), the interface the rendezvous "
                 "connection to the master uses",
                 route, local_address);
  }
  return {};
}

messages::NodeReport doctor_node_report(const NodePlan& plan, const std::string& local_address) {
  std::vector<std::string> problems;
  std::string ifname;
  if (std::string problem = choose_socket_ifname(plan, local_address, "", ifname); !problem.empty())
    problems.push_back(problem);
  if (auto user_choice = plan.base_env.find(contract::kNcclSocketIfname); user_choice != plan.base_env.end())
    ifname = user_choice->second;
  return messages::NodeReport{problems.empty(), ifname, fmt::format("{}", fmt::join(problems, "; "))};
}

}  // namespace ddplaunch
