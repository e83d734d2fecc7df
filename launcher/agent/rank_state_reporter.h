// RankStateReporter: this node's rank table to the master (`rank_states`, read by the
// master's hang check and `ddplaunch status`), with the ranks' timeline events. It reports
// at once, within 20 ms of a change (one report per burst of changes), and every 2 s while
// the workers run. It reads the node through its NodeView, sends through its MasterLink, and
// owns only its timers.
#pragma once

#include <chrono>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/master_link.h"
#include "agent/node_view.h"
#include "agent/rank_timeline_reporter.h"

namespace ddplaunch {

class RankStateReporter {
 public:
  static constexpr auto kCoalescing = std::chrono::milliseconds(20);
  static constexpr auto kPeriod = std::chrono::seconds(2);

  RankStateReporter(boost::asio::io_context& io, std::string hostname, const std::string& log_dir,
                    const NodeView& node, MasterLink& master);

  void send_now();     // the whole table, now (a generation starts, ranks resume, the group ends)
  void send_soon();    // coalesced: one report per burst of changes
  void send_periodically();  // every kPeriod while the workers run
  void send_timeline();  // the ranks' changes as timeline events only (before a failure report)
  void stop();           // the node ends: no report after this

 private:
  bool may_report() const;  // assigned and not finished: the master expects this node's ranks
  bool running() const;     // the workers run: the periodic report goes on

  const NodeView& node_;
  MasterLink& master_;
  std::string hostname_;
  std::string log_dir_shown_;  // --log-dir as an absolute path, for `ddplaunch status`
  boost::asio::steady_timer period_timer_;
  boost::asio::steady_timer coalescing_timer_;
  bool due_ = false;  // a coalesced report is waiting for its timer
  RankTimelineReporter timeline_;
};

}  // namespace ddplaunch
