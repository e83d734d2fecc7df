// The sweep of what a generation's workers left behind, and the reaping of their orphans.
#include "supervise/leftover_sweep.h"

#include <algorithm>

#include "supervise/descendant_sweep.h"
#include "supervise/own_tools.h"

namespace ddplaunch {

namespace {
// From the last worker's exit to the sweep of what it left behind: the loop first reads the
// output already in the pipes, in the order written (a sweep blocks it for a moment).
constexpr auto kSweepDelay = std::chrono::milliseconds(100);

bool some_worker_unreaped(const WorkerList& workers) {
  return std::any_of(workers.begin(), workers.end(), [](const auto& w) { return w->process.pid() > 0 && !w->process.status(); });
}
}  // namespace

void LeftoverSweep::sweep_soon_if_all_reaped() {
  if (some_worker_unreaped(workers_)) return;
  pending_ = true;
  timer_.expires_after(kSweepDelay);
  timer_.async_wait([this, gen = assignment_.generation](const boost::system::error_code& ec) {
    if (!ec && gen == assignment_.generation && pending_) sweep_now();
  });
}

// The tools are held while the sweep looks, so none is started unregistered meanwhile.
void LeftoverSweep::sweep_now() {
  pending_ = false;
  timer_.cancel();
  own_tools::while_held([this](const std::vector<pid_t>& tools) {
    std::vector<pid_t> spared = tools;
    if (guard_.pid() > 0) spared.push_back(guard_.pid());
    sweep_job_processes(guard_.job_tag(), spared);
  });
}

void LeftoverSweep::reap_adopted() const {
  if (!is_subreaper()) return;
  own_tools::while_held([this](const std::vector<pid_t>& tools) {  // their runner reaps them
    std::vector<pid_t> keep = tools;
    for (auto& w : workers_)
      if (w->process.pid() > 0 && !w->process.status()) keep.push_back(w->process.pid());
    reap_adopted_children(keep);
  });
}

}  // namespace ddplaunch
