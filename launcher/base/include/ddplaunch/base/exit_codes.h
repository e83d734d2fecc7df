// ddplaunch's own exit statuses (worker statuses are passed through as a shell would).
#pragma once

namespace ddplaunch {

inline constexpr int kExitConfigError = 2;  // bad flags/YAML, refused by the master, failed preflight
inline constexpr int kExitFailure = 1;      // lost the master, node lost, no exit status to pass on

}  // namespace ddplaunch
