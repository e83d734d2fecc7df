// How a fan-out shows a node's lines on this terminal. A remote ddplaunch started with
// --node-rank already names its node on every line it writes (workers: "[node N rank R] ...",
// its own log: "... ddplaunch[node N] ..."); those pass unchanged, so nothing is prefixed twice.
// Anything else from that connection (ssh's own messages, the remote shell's) gets
// "[node N HOST]" in front.
#pragma once

#include <string>
#include <string_view>

namespace ddplaunch::fanout {

// "" when `line` already names node `node_rank`; otherwise the prefix to put in front.
std::string relay_prefix(int node_rank, std::string_view host, std::string_view line);

}  // namespace ddplaunch::fanout
