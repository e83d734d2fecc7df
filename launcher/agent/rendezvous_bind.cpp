// The master binds what the nodes are told to reach, so that the rendezvous is not offered on
// every interface of the host (an admin network, a public address) by accident.
#include "agent/rendezvous_bind.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ddplaunch/preflight/interfaces.h"
#include "ddplaunch/preflight/resolve.h"

namespace ddplaunch {

bool is_local_address(const std::string& ip) {
  if (preflight::is_loopback(ip)) return true;
  auto interfaces = preflight::list_interfaces();
  return interfaces && preflight::interface_for_address(ip, *interfaces).has_value();
}

RendezvousBind choose_rendezvous_bind(const std::string& configured, bool standalone, const std::string& master_host,
                                      const std::vector<std::string>& resolved) {
  RendezvousBind bind;
  if (!configured.empty()) {
    std::string address = configured;
    if (address.size() >= 2 && address.front() == '[' && address.back() == ']')
      address = address.substr(1, address.size() - 2);
    bind.addresses.push_back(address);
    return bind;
  }
  if (standalone) {
    bind.addresses.push_back("127.0.0.1");
    return bind;
  }
  for (const auto& ip : resolved)
    if (is_local_address(ip)) bind.addresses.push_back(ip);
  if (bind.addresses.empty())
    bind.error = fmt::format(
        "this node hosts the rendezvous (node rank 0), but --master {} resolves to {}, and none of that is an "
        "address of this machine, so the other nodes would not reach this one. Pass node 0's own address (or a "
        "name resolving to it) to --master; behind NAT or a service address, choose where to listen with "
        "--rdzv-bind ADDR (0.0.0.0 or :: for every address)",
        master_host, fmt::join(resolved, ", "));
  return bind;
}

}  // namespace ddplaunch
