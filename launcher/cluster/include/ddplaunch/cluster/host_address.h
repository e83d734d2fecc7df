// Maps a Slurm node name (the master host from the node list) to an IP address.
// Node names often resolve through DNS or /etc/hosts; when they do not (and Slurm's
// NodeAddr cannot be read either) the user must pass --master ADDRESS[:PORT].
#pragma once

#include <optional>
#include <string>

namespace ddplaunch::cluster {

struct HostAddress {
  std::string name;                  // the node name asked for
  std::string address;               // numeric IPv4 or IPv6 address; empty on error
  std::string how;                   // "resolver" or "scontrol NodeAddr=<addr>"
  std::optional<std::string> error;  // what failed and what to do (pass --master)
  bool ok() const { return !error.has_value(); }
};

// Resolves `name`: getaddrinfo first (IPv4 preferred, then IPv6); when that fails and
// `scontrol` is on PATH, asks Slurm for the node's NodeAddr (`scontrol show node -o`,
// bounded to 5 s) and resolves that. getaddrinfo itself has no timeout: it is bounded by
// the system resolver's own settings (resolv.conf timeout/attempts).
HostAddress resolve_slurm_host(const std::string& name);

// Pure helper used by resolve_slurm_host: the NodeAddr field of one line of
// `scontrol show node -o NAME` output, or nullopt when absent.
std::optional<std::string> parse_scontrol_node_addr(const std::string& scontrol_output);

}  // namespace ddplaunch::cluster
