// run_probes: a node's planned peer probes, concurrently, so a node with many peers and
// interfaces (small jobs probe every pair) still finishes within one probe's bound or so.
#include <atomic>
#include <thread>

#include "ddplaunch/preflight/ring_plan.h"

namespace ddplaunch::preflight {

std::vector<ProbedLink> run_probes(const std::vector<PlannedProbe>& plan, std::size_t parallel) {
  std::vector<ProbedLink> out(plan.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < plan.size(); i = next++) {
      const PlannedProbe& p = plan[i];
      const ProbeEndpoint& to = p.probe.peer;
      out[i] = ProbedLink{p.pair, p.probe.ifname, p.probe.local_address,
                          (to.address.find(':') != std::string::npos ? "[" + to.address + "]" : to.address) + ":" +
                              std::to_string(to.port),
                          probe_link(p.probe)};
    }
  };
  std::vector<std::thread> threads;
  const std::size_t count = std::min(std::max<std::size_t>(parallel, 1), plan.size());
  for (std::size_t t = 0; t < count; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace ddplaunch::preflight
