// Identical lines from different ranks, printed within a short window, become one line that
// names the ranks: "[ranks 0-3] Training finished" instead of four copies. Pure: lines and
// times come in, what to print goes out (the supervisor writes it and runs the timer).
//
//  - Only byte-identical lines of the same stream merge; a line that differs in any byte is
//    its own.
//  - No line waits longer than the window: due() hands out every line whose window ended.
//  - Each rank's lines stay in its order: a rank's line joins an identical waiting one when none
//    of its own lines waits behind that one; or when its own lines behind that one are its
//    alone (not merged), and then move in front of it; or when that one may move behind them
//    (none of its ranks has a line waiting behind it). Lines of different ranks have no order
//    to keep. The common shape merges this way: every rank prints "all ready" then its own
//    "loss ..." (and again each step); a rank whose "all ready" arrives after another rank's
//    "loss" lines moves its own earlier lines in front, so the identical lines still meet.
//  - Bounded: past kMaxWaiting waiting lines the oldest goes out at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "output/worker_output.h"  // OutputStream

namespace ddplaunch {

class LineCollapser {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxWaiting = 4096;

  struct Line {
    OutputStream stream = OutputStream::Stdout;
    std::string text;
    std::vector<int> ranks;  // ascending: who printed it
  };

  explicit LineCollapser(std::chrono::milliseconds window) : window_(window) {}

  // A rank's line at `now`; what must go out at once (the oldest, when too many wait).
  std::vector<Line> add(int rank, OutputStream stream, std::string_view text, Clock::time_point now);
  // The lines whose window ended by `now`, oldest first.
  std::vector<Line> due(Clock::time_point now);
  // Every waiting line, oldest first (a generation ended, the launcher ends).
  std::vector<Line> flush();
  // The waiting lines up to this rank's newest, oldest first (before something is said about it).
  std::vector<Line> flush_through(int rank);
  // When the oldest waiting line is due; nothing waiting: nullopt-like time_point::max().
  Clock::time_point next_due() const;
  bool empty() const { return waiting_.empty(); }

 private:
  struct Waiting {
    Line line;
    Clock::time_point since;
    // Its place in the output order, spaced kOrderGap apart so that lines moved in front of
    // another get numbers between (all renumbered when no number is left between two).
    long order = 0;
  };
  using Place = std::list<Waiting>::iterator;
  // How rank `rank` may join a waiting identical line without reordering anyone's lines.
  enum class Join { No, AsItIs, OwnLinesInFront, ItMovesBehind };
  static constexpr long kOrderGap = 1L << 20;

  Join how_to_join(const Waiting& waiting, int rank) const;
  void move_own_lines_in_front(int rank, Place place);
  void renumber();
  std::vector<Line> take_through(Place last);
  static std::string key_of(OutputStream stream, std::string_view text);

  std::chrono::milliseconds window_;
  std::list<Waiting> waiting_;
  long next_order_ = 0;
  Clock::time_point oldest_since_ = Clock::time_point::max();
  std::unordered_map<int, std::deque<Place>> lines_of_rank_;  // each rank's waiting lines, in order
  std::unordered_multimap<std::string, Place> by_text_;
};

// "[ranks 0-3]" / "[node 1 ranks 4,6]"; one rank: the usual prefix.
std::string collapsed_prefix(int node_rank, int node_count, const std::vector<int>& ranks);

}  // namespace ddplaunch
