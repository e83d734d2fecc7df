// Signals to a generation's workers: stop with grace, SIGCONT, forwarded signals.
#include "supervise/worker_signals.h"

#include <csignal>

namespace ddplaunch {

bool WorkerSignals::stop(std::chrono::milliseconds grace) {
  if (stopping_ && grace.count() > 0) return false;
  stopping_ = true;
  resume_paused();
  kill_all(grace.count() > 0 ? SIGTERM : SIGKILL);
  kill_all(SIGCONT);  // a stopped worker (paused, or in a debugger's hands) cannot act on SIGTERM
  kill_timer_.expires_after(grace);
  kill_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) kill_all(SIGKILL);
  });
  return true;
}

void WorkerSignals::kill_all(int signal) {
  for (auto& w : workers_)
    if (w->process.pid() > 0 && !w->process.status()) kill(-w->process.pid(), signal);
}

void WorkerSignals::resume_paused() {
  for (auto& w : workers_) {
    if (w->process.pid() > 0 && !w->process.status() && w->signals.paused_) kill(-w->process.pid(), SIGCONT);
    w->signals.paused_ = false;
  }
}

int WorkerSignals::forward(int signal) {
  int sent = 0;
  for (auto& w : workers_)
    if (w->process.pid() > 0 && !w->process.status() && kill(w->process.pid(), signal) == 0) ++sent;
  return sent;
}

}  // namespace ddplaunch
