// RankStateReporter: the rank table and its timeline events to the master, now, coalesced
// or periodically.
#include "agent/rank_state_reporter.h"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <system_error>

#include "policy/rank_report_period.h"
#include "wire/launcher_messages.h"
#include "supervise/group_supervisor.h"

namespace ddplaunch {

RankStateReporter::RankStateReporter(boost::asio::io_context& io, std::string hostname, const std::string& log_dir,
                                     const NodeView& node, MasterLink& master, const SystemFiles& files)
    : node_(node),
      master_(master),
      hostname_(std::move(hostname)),
      period_timer_(io),
      coalescing_timer_(io),
      signals_(files, ::sysconf(_SC_CLK_TCK)) {
  if (!log_dir.empty()) {
    std::error_code ignored;
    log_dir_shown_ = std::filesystem::absolute(log_dir, ignored).lexically_normal().string();
  }
}

bool RankStateReporter::may_report() const {
  return node_.state() != NodeState::Finished && node_.state() != NodeState::Joining;
}

bool RankStateReporter::running() const { return node_.state() == NodeState::Running && node_.workers_active(); }

void RankStateReporter::send_now() {
  if (!master_.connected() || !may_report()) return;
  messages::RankStates states{hostname_, {}, log_dir_shown_, {}};
  for (const auto& w : node_.workers()) states.ranks.push_back(rank_report_of(*w));
  add_signals(states);
  master_.send(messages::encode(master_.generation(), states));
  send_timeline();
}

// The node's signals and each rank's CPU share over the sampler's window.
void RankStateReporter::add_signals(messages::RankStates& states) {
  std::vector<pid_t> pids;
  for (const auto& r : states.ranks)
    if (r.phase != RankPhase::Exited && r.pid > 0) pids.push_back(r.pid);
  const NodeSample& sample = signals_.sample(pids, NodeSignalSampler::Clock::now());
  states.signals = sample.signals;
  for (auto& r : states.ranks) {
    auto cores = sample.cpu_cores.find(r.pid);
    if (r.phase != RankPhase::Exited && cores != sample.cpu_cores.end())
      r.cpu_millicores = static_cast<long>(cores->second * 1000.0 + 0.5);
  }
}

// Changes come in bursts (a thousand workers exiting at once): one report of the whole table
// per burst, not one per change (which was O(N^2) bytes in one loop turn).
void RankStateReporter::send_soon() {
  if (due_) return;
  due_ = true;
  coalescing_timer_.expires_after(kCoalescing);
  coalescing_timer_.async_wait([this](const boost::system::error_code& ec) {
    due_ = false;
    if (!ec) send_now();
  });
}

void RankStateReporter::send_periodically(std::chrono::milliseconds period) {
  period_ = period;
  // The first one after half a period to a whole one, at random: the nodes of a job start
  // their workers within the same second, and their reports must not reach the master all in
  // the same instant every period (16384 at once at 16384 nodes) but spread over its seconds,
  // a batch a second (schedule_periodic).
  std::minstd_rand draw(static_cast<std::minstd_rand::result_type>(::getpid()) ^
                        static_cast<std::minstd_rand::result_type>(
                            std::chrono::steady_clock::now().time_since_epoch().count()));
  schedule_periodic(period_ / 2 + std::chrono::milliseconds(draw() % (period_.count() / 2 + 1)));
}

// On the wall clock's grid (rank_report_period.h): the job's reports reach the master in batches.
void RankStateReporter::schedule_periodic(std::chrono::milliseconds after) {
  const auto wall_now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  period_timer_.expires_after(report_delay_on_grid(wall_now, after, period_));
  period_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !running()) return;
    send_now();
    schedule_periodic(period_);
  });
}

// Without a master the events wait (bounded) for the next report.
void RankStateReporter::send_timeline() {
  timeline_.report(node_.workers(), master_);
}

void RankStateReporter::stop() {
  period_timer_.cancel();
  coalescing_timer_.cancel();
}

}  // namespace ddplaunch
