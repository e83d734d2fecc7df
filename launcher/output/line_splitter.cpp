// LineSplitter: buffer a partial line until its '\n' arrives.
#include "output/line_splitter.h"

namespace ddplaunch {

void LineSplitter::feed(std::string_view chunk, const LineHandler& on_line) {
  while (!chunk.empty()) {
    auto newline = chunk.find('\n');
    std::string_view piece = chunk.substr(0, newline);
    if (partial_.size() + piece.size() >= max_line_bytes_ && newline == std::string_view::npos) {
      // Too long without a newline: emit what fits as a line of its own.
      std::size_t take = max_line_bytes_ - partial_.size();
      partial_.append(piece.substr(0, take));
      on_line(partial_);
      partial_.clear();
      chunk.remove_prefix(take);
      continue;
    }
    if (newline == std::string_view::npos) {
      partial_.append(piece);
      return;
    }
    if (partial_.empty()) {
      on_line(piece);
    } else {
      partial_.append(piece);
      on_line(partial_);
      partial_.clear();
    }
    chunk.remove_prefix(newline + 1);
  }
}

void LineSplitter::finish(const LineHandler& on_line) {
  if (!partial_.empty()) on_line(partial_);
  partial_.clear();
}

}  // namespace ddplaunch
