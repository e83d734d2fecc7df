// ShimReports: what the workers' shims report on the status channel, applied to their records.
// A worker's phase moves only on these reports (init_begin → init, init_ok → running); an
// init_failed is reported after a short settle; steps and sections are its training progress.
// Also the opt-in init grace: workers with no shim count as running after it.
#pragma once

#include <functional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "ddplaunch/contract.h"
#include "supervise/group_spec.h"
#include "supervise/worker.h"

namespace ddplaunch {

class ShimReports {
 public:
  // `on_init_failed`: a worker reported init_failed and did not exit within the settle time.
  ShimReports(boost::asio::io_context& io, const GroupCallbacks& callbacks, const WorkerList& workers,
              const NodeAssignment& assignment, std::function<void(Worker&)> on_init_failed);

  void start(double init_grace_s);  // a new generation (opt-in init grace; 0: none)
  // One report. Late ones of a previous generation, and ones from outside the rank's process
  // tree, are dropped.
  void handle(const contract::StatusMessage& message);
  void set_phase(Worker& worker, RankPhase phase);  // and says so (on_phases_changed)
  void cancel_init_grace() { init_grace_.cancel(); }
  void cancel();  // the group stops: no init grace, no settle of an init failure
  void stop_settling(Worker& worker) { worker.phases.settle_timer_.cancel(); }  // its failure was reported

 private:
  void settle_init_failure(const std::shared_ptr<Worker>& worker);

  const GroupCallbacks& callbacks_;
  const WorkerList& workers_;
  const NodeAssignment& assignment_;
  std::function<void(Worker&)> on_init_failed_;
  boost::asio::steady_timer init_grace_;
};

}  // namespace ddplaunch
