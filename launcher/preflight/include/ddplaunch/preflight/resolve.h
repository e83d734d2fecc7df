// Name resolution for the master address, and the loopback test behind the classic
// "MASTER_ADDR=127.0.0.1 on a multi-node job" mistake.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/preflight/outcome.h"

namespace ddplaunch::preflight {

// Resolves a host name or an IPv4/IPv6 literal with getaddrinfo (AF_UNSPEC, AI_ADDRCONFIG
// off so loopback-only hosts still resolve). Returns the numeric addresses, deduplicated,
// in getaddrinfo's order. Error names the host and gai_strerror's text.
// Bound: one getaddrinfo call; its duration is the resolver's (normally milliseconds).
Result<std::vector<std::string>> resolve_host(const std::string& host);

// True for "localhost" (any case, optional trailing dot), 127.0.0.0/8, ::1 and
// IPv4-mapped ::ffff:127.x.x.x. Host names other than "localhost" are not resolved here.
bool is_loopback(std::string_view address);

// With nodes > 1, fails when `host` is a loopback literal or every address in `resolved`
// is loopback (other nodes would connect to themselves and hang). Passes with a note when
// only some addresses are loopback. Always passes for nodes <= 1.
CheckOutcome check_master_not_loopback(const std::string& host,
                                       const std::vector<std::string>& resolved, int nodes);

}  // namespace ddplaunch::preflight
