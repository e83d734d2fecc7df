// Line editing and history for the debug console, done on the console's side (the ranks'
// debuggers read plain lines from a pipe and never see an escape code): keys in, edit events
// out. Pure: bytes from a raw-mode terminal are fed in, whole lines come out.
//
// Keys: printable text, Backspace, Delete, Left/Right, Home/End (also Ctrl-A/Ctrl-E),
// Up/Down through the history, Ctrl-U/Ctrl-K (erase before/after the cursor), Ctrl-W (erase
// a word), Enter; Ctrl-C clears the line, and on an empty line is handed back (interrupt), as
// Ctrl-D is (end of input).
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace ddplaunch {

struct EditEvent {
  enum class Kind { Line, Interrupt, EndOfInput };
  Kind kind = Kind::Line;
  std::string line;            // Line: what was typed, without the newline
  std::size_t cut_bytes = 0;   // Line: bytes typed past kMaxLineBytes, dropped (a paste too long)
};

class LineEditor {
 public:
  static constexpr std::size_t kHistoryLines = 500;
  static constexpr std::size_t kMaxLineBytes = 4096;

  // Feeds bytes read from the terminal; returns the events they completed, in order.
  std::vector<EditEvent> feed(std::string_view bytes);

  const std::string& text() const { return text_; }
  std::size_t cursor() const { return cursor_; }
  const std::deque<std::string>& history() const { return history_; }
  // Lines typed while off (a password) are kept out of the history.
  void record_history(bool on) { record_history_ = on; }
  // `prompt` and the text, with the terminal's cursor put back at the edit position.
  std::string render(std::string_view prompt) const;

 private:
  void key(char c, std::vector<EditEvent>& events);
  void escape_done(std::string_view sequence);
  void recall(int direction);  // -1: older, +1: newer
  void insert(char c);

  std::string text_;
  std::size_t cursor_ = 0;
  std::deque<std::string> history_;
  bool record_history_ = true;
  std::size_t recalled_ = 0;  // history_.size(): editing a new line
  std::string draft_;         // the new line, kept while browsing the history
  std::string escape_;        // an escape sequence being read ("\x1b[")
  std::size_t cut_bytes_ = 0;  // bytes dropped from this line at the bound
};

}  // namespace ddplaunch
