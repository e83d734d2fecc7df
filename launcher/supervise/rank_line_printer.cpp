// RankLinePrinter: see rank_line_printer.h.
#include "supervise/rank_line_printer.h"

namespace ddplaunch {

void RankLinePrinter::start(bool collapse, int node_rank, int node_count) {
  flush();
  collapse_ = collapse;
  node_rank_ = node_rank;
  node_count_ = node_count;
}

void RankLinePrinter::print(int rank, const std::string& prefix, const std::string& separator, OutputStream stream,
                            std::string_view line) {
  // A user's prefix template (its own separator) names ranks its own way: printed as it is.
  if (!collapse_ || separator.empty()) {
    if (!collapser_.empty()) flush();  // the hot path when not collapsing: no timer touched per line
    write_prefixed_line(stream, prefix, line, separator);
    return;
  }
  for (const auto& out : collapser_.add(rank, stream, line, LineCollapser::Clock::now())) write(out);
  arm();
}

void RankLinePrinter::flush() {
  timer_.cancel();
  armed_for_ = LineCollapser::Clock::time_point::max();
  for (const auto& out : collapser_.flush()) write(out);
}

void RankLinePrinter::flush_through(int rank) {
  for (const auto& out : collapser_.flush_through(rank)) write(out);
}

void RankLinePrinter::close() { flush(); }

void RankLinePrinter::write(const LineCollapser::Line& line) {
  int node = node_rank_;
  if (!node_of_rank_.empty()) {
    auto node_of = [&](int rank) {
      auto known = node_of_rank_.find(rank);
      return known == node_of_rank_.end() ? -1 : known->second;
    };
    node = node_of(line.ranks.front());
    for (int rank : line.ranks)
      if (node_of(rank) != node) node = -1;
  }
  const std::string prefix = node >= 0 ? collapsed_prefix(node, node_count_, line.ranks)
                                       : collapsed_prefix(0, 1, line.ranks);  // "[ranks 0-7]": several nodes
  write_prefixed_line(line.stream, prefix, line.text, " ");
}

void RankLinePrinter::arm() {
  if (collapser_.empty() || collapser_.next_due() == armed_for_) return;
  armed_for_ = collapser_.next_due();
  timer_.expires_at(armed_for_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    armed_for_ = LineCollapser::Clock::time_point::max();
    for (const auto& out : collapser_.due(LineCollapser::Clock::now())) write(out);
    arm();
  });
}

}  // namespace ddplaunch
