// LineSplitter: buffer a partial line until its '\n' arrives.
#include "output/line_splitter.h"

namespace ddplaunch {

// Invariant: partial_ is always shorter than max_line_bytes_.
void LineSplitter::feed(std::string_view chunk, const LineHandler& on_line) {
  while (!chunk.empty()) {
    const auto newline = chunk.find('\n');
    const std::size_t piece = newline == std::string_view::npos ? chunk.size() : newline;
    const std::size_t room = max_line_bytes_ - partial_.size();
    if (piece > room || (piece == room && newline == std::string_view::npos)) {
      // Too long without a newline: emit what fits as a line of its own.
      partial_.append(chunk.substr(0, room));
      on_line(partial_);
      partial_.clear();
      chunk.remove_prefix(room);
      continue;
    }
    if (newline == std::string_view::npos) {
      partial_.append(chunk);
      return;
    }
    if (partial_.empty()) {
      on_line(chunk.substr(0, newline));
    } else {
      partial_.append(chunk.substr(0, newline));
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
