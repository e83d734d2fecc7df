// RankTailBuffer: numbered lines in a bounded window.
#include "output/rank_tail_buffer.h"

#include <algorithm>

namespace ddplaunch {

void RankTailBuffer::append(std::string_view lines) {
  while (!lines.empty()) {
    const std::size_t end = lines.find('\n');
    const std::string_view line = lines.substr(0, end);
    lines.remove_prefix(end == std::string_view::npos ? lines.size() : end + 1);
    lines_.emplace_back(line);
    bytes_ += line.size() + 1;
    while (lines_.size() > kMaxLines || (bytes_ > kMaxBytes && lines_.size() > 1)) {
      bytes_ -= lines_.front().size() + 1;
      lines_.pop_front();
      ++first_;
    }
  }
}

RankTailBuffer::Slice RankTailBuffer::read(long from, std::size_t max_bytes) const {
  const long end = first_ + static_cast<long>(lines_.size());
  Slice slice;
  if (from < 0) from = std::max(first_, end - static_cast<long>(kFirstReadLines));
  if (from < first_) {
    slice.missed = first_ - from;
    from = first_;
  }
  from = std::min(from, end);
  long at = from;
  for (; at < end; ++at) {
    const std::string& line = lines_[static_cast<std::size_t>(at - first_)];
    if (at > from && slice.lines.size() + line.size() + 1 > max_bytes) break;
    slice.lines += line;
    slice.lines += '\n';
  }
  slice.next = at;
  return slice;
}

}  // namespace ddplaunch
