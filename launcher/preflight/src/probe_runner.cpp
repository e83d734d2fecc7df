// run_probes: a node's planned peer probes, concurrently, so a node with many peers and
// interfaces (small jobs probe every pair) still finishes within one probe's bound or so. A
// failed link is probed once more before it counts as unreachable (a listener crowded by
// strangers for a moment, a dropped SYN).
#include <atomic>
#include <chrono>
#include <thread>

#include "ddplaunch/preflight/ring_plan.h"

namespace ddplaunch::preflight {

namespace {

LinkResult probe_link_retried(const LinkProbe& probe) {
  LinkResult result = probe_link(probe);
  if (result.ok) return result;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // on this probe's thread only
  result = probe_link(probe);
  if (!result.ok) result.error += ", tried twice";
  return result;
}

}  // namespace

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
                          probe_link_retried(p.probe)};
    }
  };
  std::vector<std::thread> threads;
  const std::size_t count = std::min(std::max<std::size_t>(parallel, 1), plan.size());
  for (std::size_t t = 0; t < count; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace ddplaunch::preflight
