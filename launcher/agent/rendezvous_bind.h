// Where the master's rendezvous server listens: the address(es) the --master name resolves to
// that belong to this machine, never the wildcard unless asked for (--rdzv-bind).
#pragma once

#include <string>
#include <vector>

namespace ddplaunch {

// True when `ip` is one of this machine's addresses (loopback included).
bool is_local_address(const std::string& ip);

struct RendezvousBind {
  std::vector<std::string> addresses;  // what Server::listen binds
  std::string error;                   // non-empty: none of the master's addresses is ours
};

// `configured`: --rdzv-bind / rendezvous_bind ("" = choose; "0.0.0.0" or "::" = everywhere,
// "::" dual-stack where the OS allows). `resolved`: what --master `master_host` resolves to.
RendezvousBind choose_rendezvous_bind(const std::string& configured, bool standalone, const std::string& master_host,
                                      const std::vector<std::string>& resolved);

}  // namespace ddplaunch
