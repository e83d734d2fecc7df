// The etcd endpoints of a job: `--rdzv-endpoint HOST:2379[,HOST:2379...]` parsed once into
// HOST:PORT pairs, with an error that names the entry at fault. Pure: no sockets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/base/result.h"

namespace ddplaunch::etcd {

enum class Scheme { Unsaid, Http, Https };  // as the entry was written: "h:p", "http://h:p", "https://h:p"

struct Endpoint {
  std::string host;  // a name, an IPv4 literal, or an IPv6 literal without brackets
  std::uint16_t port = 0;
  Scheme scheme = Scheme::Unsaid;
  std::string text() const;  // "host:port", "[::1]:port"
  bool operator==(const Endpoint& other) const { return host == other.host && port == other.port; }
};

// "h1:2379,h2:2379" (spaces around commas allowed; "http://h:p" and "https://h:p" accepted,
// a trailing "/" too). `flag` names where the list came from, for the error ("--rdzv-endpoint").
// Refused with a reason: an empty list or entry, a missing or bad port, a path, a duplicate.
Result<std::vector<Endpoint>> parse_endpoints(std::string_view list, std::string_view flag);

// Whether the client speaks TLS: asked for (--rdzv-conf protocol=https) or by https://
// entries. Refused: http:// and https:// entries mixed, or http:// with protocol=https.
Result<bool> uses_tls(const std::vector<Endpoint>& endpoints, bool https_asked, std::string_view flag);

}  // namespace ddplaunch::etcd
