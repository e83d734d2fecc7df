// RankTailBuffer: the latest lines of one followed rank on the master, numbered, for the
// `ddplaunch tail` clients that poll it (each remembers the number of the next line it wants).
// Bounded in lines and bytes: a client that falls behind is told how many lines it missed.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

namespace ddplaunch {

class RankTailBuffer {
 public:
  static constexpr std::size_t kMaxLines = 2000;
  static constexpr std::size_t kMaxBytes = 512 * 1024;
  static constexpr std::size_t kFirstReadLines = 10;  // a new client starts with these, like tail(1)

  // Whole lines, each ended by '\n' (a last one without is taken whole too).
  void append(std::string_view lines);

  struct Slice {
    long next = 0;      // the number to ask for next time
    long missed = 0;    // lines gone before the client read them
    std::string lines;  // each ended by '\n'
  };
  // Lines from number `from` on, at most `max_bytes` of them (at least one line); `from` < 0:
  // the last kFirstReadLines lines.
  Slice read(long from, std::size_t max_bytes) const;
  long next() const { return first_ + static_cast<long>(lines_.size()); }  // the next line's number

 private:
  std::deque<std::string> lines_;
  long first_ = 0;  // the number of lines_.front()
  std::size_t bytes_ = 0;
};

}  // namespace ddplaunch
