// Reassembles whole lines from the arbitrary chunks a pipe delivers, so worker output is
// always forwarded a line at a time and never interleaved mid-line. A '\r' that is not part
// of "\r\n" ends a progress segment (tqdm and friends redraw one line with '\r'): the latest
// one is shown promptly, as a line of its own, at most once per progress interval.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ddplaunch {

// A progress segment reaches the handler with one trailing '\r' (an ordinary line never ends
// with one: "\r\n" is an ordinary line end). Displays strip it; a tail of recent lines keeps
// only the latest progress segment of a run of them.
inline bool is_progress_segment(std::string_view line) { return !line.empty() && line.back() == '\r'; }
inline std::string_view without_progress_mark(std::string_view line) {
  return is_progress_segment(line) ? line.substr(0, line.size() - 1) : line;
}

class LineSplitter {
 public:
  using LineHandler = std::function<void(std::string_view line)>;  // without the '\n'
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // Lines longer than max_line_bytes are cut into pieces of that size (bounded memory).
  // Progress segments are shown at most once per progress_interval (the latest one wins).
  explicit LineSplitter(std::size_t max_line_bytes = 64 * 1024,
                        std::chrono::milliseconds progress_interval = std::chrono::milliseconds(200),
                        Clock clock = [] { return std::chrono::steady_clock::now(); })
      : max_line_bytes_(max_line_bytes), progress_interval_(progress_interval), clock_(std::move(clock)) {}

  void feed(std::string_view chunk, const LineHandler& on_line);
  void finish(const LineHandler& on_line);  // at EOF: emit a final unterminated line
  // The text after the last line end, not emitted yet: a prompt waiting for input ("(Pdb) ").
  std::string_view unterminated() const { return partial_; }
  // It is a progress bar's current state ('\r' redraws on this line), not a question.
  bool unterminated_is_progress() const { return in_progress_ || pending_cr_; }
  // Forgets it (it was taken as a prompt and is shown by other means).
  void drop_unterminated() {
    partial_.clear();
    partial_shown_ = false;
  }

 private:
  void end_line(const LineHandler& on_line);
  void end_progress_segment();
  void show_progress(const LineHandler& on_line);
  void append(std::string_view text, const LineHandler& on_line);

  std::size_t max_line_bytes_;
  std::chrono::milliseconds progress_interval_;
  Clock clock_;
  std::string partial_;       // the current segment, not yet ended
  bool partial_shown_ = false;  // partial_ was displayed as progress and has not changed since
  bool pending_cr_ = false;   // the last byte seen was '\r': "\r\n" or a progress segment's end
  bool in_progress_ = false;  // a '\r' ended a segment since the last '\n'
  std::string latest_progress_;  // an ended progress segment not shown yet (throttled)
  bool shown_any_ = false;
  std::chrono::steady_clock::time_point last_shown_{};
};

}  // namespace ddplaunch
