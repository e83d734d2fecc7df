// The peer probe between the nodes: each node's probed links (node → master) and the
// verdict that starts the workers (master → nodes): records, each declared once on the wire.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/preflight/ring_plan.h"
#include "ddplaunch/rendezvous/types.h"
#include "wire/message_declaration.h"

namespace ddplaunch::messages {

struct ProbeResults { std::vector<preflight::ProbedLink> links; };
struct ProbeVerdict { std::string ifname; };

inline constexpr std::size_t kMaxProbeLinks = 1024;
inline constexpr std::size_t kMaxProbeErrorBytes = 300;

// One line per link, tab-separated: from to ifname source destination ok rtt_ms mbit error
// (written: at most kMaxProbeLinks links, each error cut to kMaxProbeErrorBytes on one line).
// Read: more links, or a malformed line, refuses the whole message.
struct ProbeLinkLines {
  std::string write(const std::vector<preflight::ProbedLink>& links) const;
  bool read(const std::string* sent, std::vector<preflight::ProbedLink>& links) const;
};

template <>
struct WireFields<ProbeResults> {
  static constexpr Kind kind = Kind::ProbeResults;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("links", p.links, ProbeLinkLines{});
  }
};

// ifname "": start with the socket interface as before.
template <>
struct WireFields<ProbeVerdict> {
  static constexpr Kind kind = Kind::ProbeVerdict;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("ifname", p.ifname, Text{});
  }
};

// The names the rest of the tree calls: decode<Payload> under its older name.
inline constexpr auto& decode_probe_results = decode<ProbeResults>;
inline constexpr auto& decode_probe_verdict = decode<ProbeVerdict>;

}  // namespace ddplaunch::messages
