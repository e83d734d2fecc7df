// LineSplitter: buffer a partial line until its '\n' arrives; show '\r' progress segments
// promptly but throttled, so a progress bar is live without flooding the terminal or the tail.
#include "output/line_splitter.h"

namespace ddplaunch {

// Invariant: partial_ is always shorter than max_line_bytes_.
void LineSplitter::append(std::string_view text, const LineHandler& on_line) {
  while (!text.empty()) {
    const std::size_t room = max_line_bytes_ - partial_.size();
    if (text.size() < room) {
      partial_.append(text);
      partial_shown_ = false;
      return;
    }
    // Too long without a line end: emit what fits as a line of its own.
    partial_.append(text.substr(0, room));
    on_line(partial_);
    partial_.clear();
    partial_shown_ = false;
    text.remove_prefix(room);
  }
}

void LineSplitter::end_line(const LineHandler& on_line) {
  latest_progress_.clear();  // superseded by this line
  // A segment already displayed as progress and unchanged since is not printed twice. The
  // last segment of a progress run is the bar's final state: still a progress segment, so a
  // tail keeps it in place of the earlier states.
  if (!partial_shown_) {
    if (in_progress_ && !partial_.empty()) on_line(partial_ + '\r');
    else on_line(partial_);
  }
  partial_.clear();
  partial_shown_ = false;
  in_progress_ = false;
}

void LineSplitter::end_progress_segment() {
  in_progress_ = true;
  if (!partial_.empty() && !partial_shown_) latest_progress_ = partial_;
  partial_.clear();
  partial_shown_ = false;
}

// At the end of a chunk: the current state of the progress line, if the interval allows.
void LineSplitter::show_progress(const LineHandler& on_line) {
  const bool current = !partial_.empty() && !partial_shown_;
  if (!current && latest_progress_.empty()) return;
  const auto now = clock_();
  if (shown_any_ && now - last_shown_ < progress_interval_) return;
  std::string text = current ? partial_ : latest_progress_;
  text.push_back('\r');
  on_line(text);
  shown_any_ = true;
  last_shown_ = now;
  latest_progress_.clear();
  if (current) partial_shown_ = true;
}

void LineSplitter::feed(std::string_view chunk, const LineHandler& on_line) {
  while (!chunk.empty()) {
    if (pending_cr_) {
      pending_cr_ = false;
      if (chunk.front() == '\n') {  // "\r\n": an ordinary line end
        end_line(on_line);
        chunk.remove_prefix(1);
        continue;
      }
      end_progress_segment();
    }
    const auto end = chunk.find_first_of("\r\n");
    if (end == std::string_view::npos) {
      append(chunk, on_line);
      break;
    }
    append(chunk.substr(0, end), on_line);
    if (chunk[end] == '\n') end_line(on_line);
    else pending_cr_ = true;
    chunk.remove_prefix(end + 1);
  }
  // A chunk ending in '\r' most likely ended a progress segment: show it now (if "\n" comes
  // next, the line is not printed again).
  if (in_progress_ || pending_cr_) show_progress(on_line);
}

void LineSplitter::finish(const LineHandler& on_line) {
  if (pending_cr_) end_progress_segment();
  pending_cr_ = false;
  if (!partial_.empty() && !partial_shown_) on_line(in_progress_ ? partial_ + '\r' : partial_);
  else if (!latest_progress_.empty()) on_line(latest_progress_ + '\r');  // the bar's final state
  partial_.clear();
  latest_progress_.clear();
  partial_shown_ = false;
  in_progress_ = false;
}

}  // namespace ddplaunch
