// RankStateReporter: this node's rank table to the master (`rank_states`, read by the
// master's hang check and `ddplaunch status`), with the ranks' timeline events. It reports
// at once, within 20 ms of a change (one report per burst of changes), and every 2 s while
// the workers run. It reads the node through RankStateSource and owns only its timers.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/rank_timeline_reporter.h"
#include "ddplaunch/rendezvous/generation.h"
#include "ddplaunch/rendezvous/types.h"
#include "supervise/worker.h"

namespace ddplaunch {

// What the reporter reads from its node, each time it reports.
struct RankStateSource {
  std::function<bool()> connected;  // a master to send to (the node's rendezvous client)
  std::function<void(const rendezvous::Message&)> send;
  std::function<const std::vector<std::shared_ptr<Worker>>&()> workers;
  std::function<Generation()> generation;
  std::function<bool()> may_report;  // assigned and not finished: the master expects its ranks
  std::function<bool()> running;     // the workers run: the periodic report goes on
};

class RankStateReporter {
 public:
  static constexpr auto kCoalescing = std::chrono::milliseconds(20);
  static constexpr auto kPeriod = std::chrono::seconds(2);

  RankStateReporter(boost::asio::io_context& io, std::string hostname, const std::string& log_dir,
                    RankStateSource source);

  void send_now();     // the whole table, now (a generation starts, ranks resume, the group ends)
  void send_soon();    // coalesced: one report per burst of changes
  void send_periodically();  // every kPeriod while the source says the workers run
  void send_timeline();  // the ranks' changes as timeline events only (before a failure report)
  void stop();           // the node ends: no report after this

 private:
  RankStateSource source_;
  std::string hostname_;
  std::string log_dir_shown_;  // --log-dir as an absolute path, for `ddplaunch status`
  boost::asio::steady_timer period_timer_;
  boost::asio::steady_timer coalescing_timer_;
  bool due_ = false;  // a coalesced report is waiting for its timer
  RankTimelineReporter timeline_;
};

}  // namespace ddplaunch
