// WorkerSignals: the signals the launcher sends to one generation's workers. The stop with a
// grace (SIGTERM to each worker's process group, SIGKILL when the grace ends), SIGCONT to
// workers started stopped, and Slurm's checkpoint signals forwarded to each worker itself.
#pragma once

#include <chrono>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "supervise/group_spec.h"

namespace ddplaunch {

class WorkerSignals {
 public:
  WorkerSignals(boost::asio::io_context& io, const WorkerList& workers) : workers_(workers), kill_timer_(io) {}

  void start() { stopping_ = false; }  // a new generation: not stopping
  // SIGTERM every running worker's process group, SIGKILL after `grace` (at once for 0); a
  // stopped worker is continued so it can act on SIGTERM. A second stop with a grace while
  // one is under way does nothing and returns false.
  bool stop(std::chrono::milliseconds grace);
  bool stopping() const { return stopping_; }  // a stop was ordered: exits are not failures
  void kill_all(int signal);  // each running worker's process group
  void resume_paused();  // SIGCONT to workers started with --pause-ranks
  void started(Worker& worker, bool paused) { worker.signals.paused_ = paused; }  // paused: started stopped
  // To every running worker's own process (not its group: a data-loader child that does not
  // handle it would die). Returns how many workers were signalled.
  int forward(int signal);
  void cancel() { kill_timer_.cancel(); }

 private:
  const WorkerList& workers_;
  boost::asio::steady_timer kill_timer_;
  bool stopping_ = false;
};

}  // namespace ddplaunch
