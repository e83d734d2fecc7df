// The peer probe between the nodes: each node's probed links (node → master) and the
// verdict that starts the workers (master → nodes): records and their codec.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "ddplaunch/preflight/ring_plan.h"

namespace ddplaunch::messages {

struct ProbeResults { std::vector<preflight::ProbedLink> links; };
struct ProbeVerdict { std::string ifname; };

rendezvous::Message encode(Generation generation, const ProbeResults& payload);
rendezvous::Message encode(Generation generation, const ProbeVerdict& payload);

// At most kMaxProbeLinks links; a malformed line makes the whole message nullopt.
inline constexpr std::size_t kMaxProbeLinks = 1024;
std::optional<ProbeResults> decode_probe_results(const rendezvous::Message& message);
std::optional<ProbeVerdict> decode_probe_verdict(const rendezvous::Message& message);

}  // namespace ddplaunch::messages
