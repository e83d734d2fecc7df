// LeftoverSweep: what a generation's workers left behind, found and killed
// (descendant_sweep.h) once every worker is reaped, so that none holds a port, a GPU or a
// pipe into the next generation or past the end of the job; and, as the subreaper, the
// workers' orphans reaped. Never the orphan guard, nor a tool the launcher runs for itself
// (own_tools.h).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "supervise/group_spec.h"
#include "supervise/orphan_guard.h"

namespace ddplaunch {

class LeftoverSweep {
 public:
  LeftoverSweep(boost::asio::io_context& io, OrphanGuard& guard, const WorkerList& workers,
                const NodeAssignment& assignment)
      : guard_(guard), workers_(workers), assignment_(assignment), timer_(io) {}

  // After a worker was reaped: when it was the generation's last, sweeps shortly after (what
  // is left may hold their output pipes open).
  void sweep_soon_if_all_reaped();
  void sweep_now();  // and no later sweep of this generation
  // As a subreaper the launcher inherits its workers' orphans: reaps those, never a worker
  // whose exit is still to be read.
  void reap_adopted() const;
  void cancel() { timer_.cancel(); }

 private:
  OrphanGuard& guard_;
  const WorkerList& workers_;
  const NodeAssignment& assignment_;
  boost::asio::steady_timer timer_;
  bool pending_ = false;  // a sweep is scheduled and has not run
};

}  // namespace ddplaunch
