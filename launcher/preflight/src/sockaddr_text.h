// Private: numeric text for a sockaddr (inet_ntop, no scope id, no port), and the parse
// of a numeric IP literal into a sockaddr_storage. Shared by the .cpp files of this module.
#pragma once

#include <sys/socket.h>

#include <optional>
#include <string>

namespace ddplaunch::preflight {

// "" for families other than AF_INET/AF_INET6.
std::string sockaddr_ip_text(const sockaddr* sa);

// Parses a numeric IPv4/IPv6 literal (brackets and a %scope suffix allowed for IPv6)
// into `out` with `port`; returns the address length, or nullopt when not a literal.
std::optional<socklen_t> parse_ip_literal(const std::string& ip, int port, sockaddr_storage& out);

}  // namespace ddplaunch::preflight
