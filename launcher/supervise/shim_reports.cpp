// Shim reports applied to the workers: phase, init failure (after a settle), progress.
#include "supervise/shim_reports.h"

#include <algorithm>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "ddplaunch/base/time_units.h"
#include "supervise/descendant_sweep.h"
#include "supervise/progress_record.h"

namespace ddplaunch {

namespace {
constexpr auto kInitFailureSettle = std::chrono::milliseconds(500);
}  // namespace

ShimReports::ShimReports(boost::asio::io_context& io, const GroupCallbacks& callbacks, const WorkerList& workers,
                         const NodeAssignment& assignment, std::function<void(Worker&)> on_init_failed)
    : callbacks_(callbacks),
      workers_(workers),
      assignment_(assignment),
      on_init_failed_(std::move(on_init_failed)),
      init_grace_(io) {}

// Opt-in for programs without any shim: count them as running after init_grace_s, so that a
// late failure is a runtime one. Nothing is ever killed by this timer.
void ShimReports::start(double init_grace_s) {
  if (init_grace_s <= 0) return;
  init_grace_.expires_after(seconds_to_ms(init_grace_s));
  init_grace_.async_wait([this, gen = assignment_.generation](const boost::system::error_code& ec) {
    if (ec || gen != assignment_.generation) return;
    for (auto& w : workers_)
      if (w->phases.phase_ == RankPhase::Setup && w->phases.init_entries_ == 0 && !w->process.status())
        set_phase(*w, RankPhase::Running);
  });
}

void ShimReports::cancel() {
  cancel_init_grace();
  for (auto& w : workers_) stop_settling(*w);
}

void ShimReports::set_phase(Worker& worker, RankPhase phase) {
  worker.phases.phase_ = phase;
  callbacks_.phases_changed();
}

void ShimReports::handle(const contract::StatusMessage& m) {
  // The worker's datagram carries the contract's plain number; a late report is from a previous generation.
  static_assert(std::is_same_v<contract::GenerationNumber, decltype(Generation::value)>,
                "the shim's generation number and the launcher's Generation have one width");
  if (m.generation != assignment_.generation.value) return;
  auto it = std::find_if(workers_.begin(), workers_.end(), [&](const auto& w) { return w->global_rank == m.rank; });
  if (it == workers_.end() || (*it)->process.status()) return;
  Worker& w = **it;
  WorkerPhases& phases = w.phases;
  // Only the rank's own worker (or a process it started) speaks for that rank: a report from
  // another process (another rank's worker, any process of this user) is dropped, once said.
  if (!descends_from(static_cast<pid_t>(m.pid), w.process.pid())) {
    if (!phases.foreign_report_seen_)
      write_prefixed_line(OutputStream::Stderr, "[ddplaunch]",
                          fmt::format("ignored a status report for rank {} from pid {}, which is not that rank's "
                                      "worker nor one of its processes (further ones are ignored silently)",
                                      w.global_rank, m.pid));
    phases.foreign_report_seen_ = true;
    return;
  }
  switch (m.event) {
    case contract::StatusEvent::InitBegin:
      ++phases.init_entries_;  // a later communicator (lazy NCCL init, a new sub-group) is init again
      set_phase(w, RankPhase::Init);
      break;
    case contract::StatusEvent::InitOk:
      if (phases.init_failure_detail_.empty()) set_phase(w, RankPhase::Running);
      break;
    case contract::StatusEvent::InitFailed:
      phases.init_failure_detail_ = m.detail;
      settle_init_failure(*it);
      break;
    case contract::StatusEvent::Heartbeat:
      break;
    case contract::StatusEvent::Step:          // progress: for hang detection
    case contract::StatusEvent::SectionBegin:
    case contract::StatusEvent::SectionEnd:
      if (record_progress(w, m)) callbacks_.phases_changed();
      break;
  }
}

// A worker that reports init_failed usually prints its error and exits at once: reported at
// its exit, with those last lines; if it lingers, reported after a short settle time anyway,
// since the other ranks may be hanging in init meanwhile.
void ShimReports::settle_init_failure(const std::shared_ptr<Worker>& worker) {
  worker->phases.settle_timer_.expires_after(kInitFailureSettle);
  worker->phases.settle_timer_.async_wait([this, keep = worker, gen = assignment_.generation](const boost::system::error_code& ec) {
    if (!ec && gen == assignment_.generation && !keep->process.status()) on_init_failed_(*keep);
  });
}

}  // namespace ddplaunch
