// The hosts of a fan-out launch (`ddplaunch --hosts` / `--hostfile`), with
// DeepSpeed's conventions, which users of multi-node launchers already know:
//   hostfile:  one "HOST slots=N" per line ("HOST" alone: slots from --nproc-per-node),
//              '#' comments, blank lines ignored
//   --include / --exclude:  "HOST[:SLOT,SLOT...]@HOST[:...]" — whole hosts or some of their
//              slots (GPU indices); include keeps only those, exclude removes them; not both.
// Pure: parsing and selection only; errors name the line / item at fault and the fix.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ddplaunch::cluster {

struct FanoutHost {
  std::string name;
  int slots = 0;              // 0: not given (the launch's --nproc-per-node decides)
  std::vector<int> devices;   // selected slot (GPU) indices; empty: every slot
  // Workers on this host: the selected devices, else the slots, else `fallback`.
  int workers(int fallback) const {
    return !devices.empty() ? static_cast<int>(devices.size()) : slots > 0 ? slots : fallback;
  }
};

struct HostSelection {
  std::vector<FanoutHost> hosts;  // in the order given; the first hosts the rendezvous
  std::string error;              // non-empty: hosts is meaningless
  bool ok() const { return error.empty(); }
};

// "h1,h2" or a Slurm hostlist "gpu[01-04]"; a host named twice is an error.
HostSelection parse_host_list(std::string_view list);
// A DeepSpeed hostfile's text; `origin` (the file name) goes into error messages.
HostSelection parse_hostfile(std::string_view text, std::string_view origin);
// Applies --include or --exclude ("" = not given); both given is an error.
HostSelection select_hosts(HostSelection all, std::string_view include, std::string_view exclude);

}  // namespace ddplaunch::cluster
