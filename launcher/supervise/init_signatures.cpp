// The signature table. Each entry is a list of substrings that must all appear in one line.
#include "supervise/init_signatures.h"

#include <initializer_list>
#include <vector>

namespace ddplaunch {

namespace {

struct Signature {
  std::string_view name;
  std::vector<std::string_view> all_of;
};

const std::vector<Signature>& signatures() {
  static const std::vector<Signature> table{
      {"NCCL communicator init failed", {"ncclCommInitRank"}},
      {"NCCL error: unhandled system error", {"NCCL error", "unhandled system error"}},
      {"NCCL error: unhandled cuda error", {"NCCL error", "unhandled cuda error"}},
      {"NCCL error: internal error", {"NCCL error", "internal error"}},
      {"NCCL error: remote process exited", {"NCCL error", "remote process exited"}},
      {"NCCL bootstrap failure", {"NCCL WARN", "Bootstrap"}},
      {"NCCL socket interface not found", {"NCCL WARN", "no socket interface found"}},
      {"c10d DistNetworkError", {"DistNetworkError"}},
      {"c10d store connection refused", {"TCPStore", "Connection refused"}},
      {"c10d store timeout", {"Timed out", "TCPStore"}},
      {"c10d client socket timeout", {"Socket Timeout"}},
      {"c10d client socket timeout", {"client socket has timed out"}},
      {"c10d: address already in use", {"EADDRINUSE"}},
      {"c10d: address already in use", {"address already in use"}},
      {"process group init timeout", {"Timed out initializing process group"}},
      {"rendezvous error", {"RendezvousConnectionError"}},
      {"rendezvous timeout", {"RendezvousTimeoutError"}},
      {"gloo full-mesh connect failed", {"Gloo", "connectFullMesh"}},
      {"gloo connect failed", {"gloo/transport/tcp", "Connection refused"}},
  };
  return table;
}

}  // namespace

std::optional<InitSignatureMatch> match_init_signature(std::string_view line) {
  for (const Signature& s : signatures()) {
    bool all = true;
    for (std::string_view needle : s.all_of) all = all && line.find(needle) != std::string_view::npos;
    if (all) return InitSignatureMatch{std::string(s.name), std::string(line)};
  }
  return std::nullopt;
}

std::optional<InitSignatureMatch> match_init_signature(const std::deque<std::string>& lines) {
  for (const auto& line : lines)
    if (auto m = match_init_signature(line)) return m;
  return std::nullopt;
}

}  // namespace ddplaunch
