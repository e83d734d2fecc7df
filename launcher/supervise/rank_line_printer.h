// Workers' lines on this launcher's terminal: at once, or (collapsing) after a short window
// in which identical lines of other ranks merge into one ("[ranks 0-3] Training finished";
// output/line_collapser.h). Owns the window's timer; the supervisor flushes it before any
// other output of its ranks, so nothing is reordered around a rank's exit or its debugger.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "output/line_collapser.h"

namespace ddplaunch {

class RankLinePrinter {
 public:
  static constexpr std::chrono::milliseconds kWindow{150};

  explicit RankLinePrinter(boost::asio::io_context& io) : timer_(io), collapser_(kWindow) {}

  // A new generation's ranks: `collapse` off prints every line at once.
  void start(bool collapse, int node_rank, int node_count);
  // One rank's line; `prefix`/`separator`: how it is printed on its own.
  void print(int rank, const std::string& prefix, const std::string& separator, OutputStream stream,
             std::string_view line);
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
  LineCollapser::Clock::time_point armed_for_ = LineCollapser::Clock::time_point::max();
};

}  // namespace ddplaunch
