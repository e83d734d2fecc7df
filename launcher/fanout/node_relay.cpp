// Relay prefixes: see node_relay.h.
#include "fanout/node_relay.h"

#include <fmt/format.h>

namespace ddplaunch::fanout {

std::string relay_prefix(int node_rank, std::string_view host, std::string_view line) {
  const std::string worker_tag = fmt::format("[node {} rank ", node_rank);
  const std::string launcher_tag = fmt::format(" ddplaunch[node {}] ", node_rank);
  if (line.substr(0, worker_tag.size()) == worker_tag || line.find(launcher_tag) != std::string_view::npos) return "";
  return fmt::format("[node {} {}]", node_rank, host);
}

}  // namespace ddplaunch::fanout
