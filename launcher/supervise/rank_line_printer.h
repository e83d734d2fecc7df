// Workers' lines on this launcher's terminal: at once, or (collapsing) after a short window
// in which identical lines of other ranks merge into one ("[ranks 0-3] Training finished";
// output/line_collapser.h). Owns the window's timer; the supervisor flushes it before any
// other output of its ranks, so nothing is reordered around a rank's exit or its debugger.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <unordered_map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "output/line_collapser.h"

namespace ddplaunch {

class RankLinePrinter {
 public:
  static constexpr std::chrono::milliseconds kWindow{150};

  explicit RankLinePrinter(boost::asio::io_context& io, std::chrono::milliseconds window = kWindow)
      : timer_(io), collapser_(window) {}

  // A new generation's ranks: `collapse` off prints every line at once.
  void start(bool collapse, int node_rank, int node_count);
  // One rank's line; `prefix`/`separator`: how it is printed on its own.
  void print(int rank, const std::string& prefix, const std::string& separator, OutputStream stream,
             std::string_view line);
  // Lines of ranks of several nodes (the fan-out's terminal): `rank` is on node `node`. A merged
  // line names that node when all its ranks are on it, else only the ranks ("[ranks 0-7]").
  void note_node(int rank, int node) { node_of_rank_[rank] = node; }
  void flush();  // every waiting line now
  void flush_through(int rank);  // the waiting lines up to this rank's newest
  void close();

 private:
  void write(const LineCollapser::Line& line);
  void arm();

  boost::asio::steady_timer timer_;
  LineCollapser collapser_;
  bool collapse_ = false;
  int node_rank_ = 0, node_count_ = 1;
  std::unordered_map<int, int> node_of_rank_;  // empty: every rank is on node_rank_
  LineCollapser::Clock::time_point armed_for_ = LineCollapser::Clock::time_point::max();
};

}  // namespace ddplaunch
