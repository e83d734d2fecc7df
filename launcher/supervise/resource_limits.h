// The launcher's own resource limits, set once at start. Workers inherit them.
#pragma once

#include <string>

namespace ddplaunch {

// Raises the soft RLIMIT_NOFILE to the hard limit (torchrun leaves it; NCCL and data
// loaders open many sockets and files, and a rendezvous under a connection flood needs
// room). Returns "" or a warning for the person at the terminal.
std::string raise_descriptor_limit();

}  // namespace ddplaunch
