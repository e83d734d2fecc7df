// This node's network interfaces (getifaddrs) and which one the kernel would use to reach
// the master (UDP connect + getsockname: the route lookup, without sending a packet).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/preflight/outcome.h"

namespace ddplaunch::preflight {

struct NetInterface {
  std::string name;
  bool up = false;        // IFF_UP and IFF_RUNNING
  bool loopback = false;  // IFF_LOOPBACK
  std::vector<std::string> ipv4;  // numeric, e.g. "10.0.0.5"
  std::vector<std::string> ipv6;  // numeric, no %scope suffix
  bool has_address() const { return !ipv4.empty() || !ipv6.empty(); }
};

// One entry per interface name, in getifaddrs order. Error only when getifaddrs fails.
Result<std::vector<NetInterface>> list_interfaces();

// The local address the kernel would use as source to reach `master_ip` (numeric IPv4/IPv6
// literal; resolve names first). No packet is sent.
Result<std::string> route_source_address(const std::string& master_ip);

// The interface that carries `local_ip` (compared as addresses, so "::1" == "0:0::1").
std::optional<std::string> interface_for_address(const std::string& local_ip,
                                                 const std::vector<NetInterface>& interfaces);

}  // namespace ddplaunch::preflight
