// A command run under a host name of its own: a new UTS namespace (unshare --uts) whose
// hostname is set before the command is exec'd in place, so that several launchers on one
// machine report different hosts (the run history and the lemon hosts key on the host name)
// while sharing 127.0.0.1. Root only.
#pragma once

#include <unistd.h>

#include <string>
#include <vector>

namespace ddplaunch::testing {

inline std::string own_hostname_skip_reason() {
  if (::geteuid() != 0) return "needs root to give a launcher a host name of its own (unshare --uts)";
  if (::access("/usr/bin/unshare", X_OK) != 0) return "/usr/bin/unshare (util-linux) is not installed";
  return "";
}

// `argv` exec'd in place (its pid is the one started) with `hostname` as the host's name.
inline std::vector<std::string> with_own_hostname(const std::string& hostname, const std::vector<std::string>& argv) {
  std::vector<std::string> full = {"/usr/bin/unshare", "--uts", "--", "/bin/sh", "-c", "hostname \"$0\" && exec \"$@\"",
                                   hostname};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

}  // namespace ddplaunch::testing
