// RankStateReporter: the rank table and its timeline events to the master, now, coalesced
// or periodically.
#include "agent/rank_state_reporter.h"

#include <filesystem>
#include <system_error>

#include "wire/launcher_messages.h"
#include "supervise/group_supervisor.h"

namespace ddplaunch {

RankStateReporter::RankStateReporter(boost::asio::io_context& io, std::string hostname, const std::string& log_dir,
                                     const NodeView& node, MasterLink& master)
    : node_(node), master_(master), hostname_(std::move(hostname)), period_timer_(io), coalescing_timer_(io) {
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
  messages::RankStates states{hostname_, {}, log_dir_shown_};
  for (const auto& w : node_.workers()) states.ranks.push_back(rank_report_of(*w));
  master_.send(messages::encode(master_.generation(), states));
  send_timeline();
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

void RankStateReporter::send_periodically() {
  period_timer_.expires_after(kPeriod);
  period_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !running()) return;
    send_now();
    send_periodically();
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
