// RankStateReporter: this node's rank table to the master (`rank_states`, read by the
// master's hang check, straggler watch and `ddplaunch status`), with the ranks' timeline
// events and what the node measured of itself (its NodeSignalSampler: steal, throttling,
// pressure, each rank's CPU share). It reports at once, within 20 ms of a change (one report
// per burst of changes), and periodically while the workers run: every 2 s, longer in a large
// job (rank_report_period.h). It reads the node through its NodeView, sends through its
// MasterLink, and owns only its timers and its sampler.
#pragma once

#include <chrono>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/master_link.h"
#include "agent/node_signal_sampler.h"
#include "agent/node_view.h"
#include "agent/rank_timeline_reporter.h"
#include "wire/node_messages.h"

namespace ddplaunch {

class RankStateReporter {
 public:
  static constexpr auto kCoalescing = std::chrono::milliseconds(20);

  // `files`: where the node's signals are read (node_signal_sampler.h).
  RankStateReporter(boost::asio::io_context& io, std::string hostname, const std::string& log_dir,
                    const NodeView& node, MasterLink& master, const SystemFiles& files = kernel_files());

  void send_now();     // the whole table, now (a generation starts, ranks resume, the group ends)
  void send_soon();    // coalesced: one report per burst of changes
  // Every `period` while the workers run (policy/rank_report_period.h says how long), the
  // first after a random part of it (between a half and a whole).
  void send_periodically(std::chrono::milliseconds period);
  void send_timeline();  // the ranks' changes as timeline events only (before a failure report)
  void stop();           // the node ends: no report after this

 private:
  void schedule_periodic(std::chrono::milliseconds after);
  bool may_report() const;  // assigned and not finished: the master expects this node's ranks
  void add_signals(messages::RankStates& states);
  bool running() const;     // the workers run: the periodic report goes on

  const NodeView& node_;
  MasterLink& master_;
  std::string hostname_;
  std::string log_dir_shown_;  // --log-dir as an absolute path, for `ddplaunch status`
  boost::asio::steady_timer period_timer_;
  std::chrono::milliseconds period_{0};
  boost::asio::steady_timer coalescing_timer_;
  bool due_ = false;  // a coalesced report is waiting for its timer
  RankTimelineReporter timeline_;
  NodeSignalSampler signals_;  // what explains a slow rank here, sent with each report
};

}  // namespace ddplaunch
