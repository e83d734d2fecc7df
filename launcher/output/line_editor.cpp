// The console's line editor: keys, escape sequences, history.
#include "output/line_editor.h"

namespace ddplaunch {

namespace {
constexpr char kEscape = '\x1b';
bool is_word_char(char c) { return c != ' ' && c != '\t'; }
}  // namespace

std::vector<EditEvent> LineEditor::feed(std::string_view bytes) {
  std::vector<EditEvent> events;
  for (char c : bytes) {
    if (!escape_.empty()) {
      escape_ += c;
      // ESC [ ... final byte (0x40-0x7e), or ESC O x (application cursor keys).
      const bool csi = escape_.size() >= 2 && escape_[1] == '[';
      const bool ss3 = escape_.size() >= 2 && escape_[1] == 'O';
      const bool done = (csi && escape_.size() >= 3 && c >= 0x40 && c <= 0x7e) || (ss3 && escape_.size() == 3) ||
                        (!csi && !ss3 && escape_.size() == 2) || escape_.size() > 16;
      if (done) {
        escape_done(escape_);
        escape_.clear();
      }
      continue;
    }
    if (c == kEscape) {
      escape_ = std::string(1, c);
      continue;
    }
    key(c, events);
  }
  return events;
}

void LineEditor::key(char c, std::vector<EditEvent>& events) {
  switch (c) {
    case '\r':
    case '\n': {
      EditEvent e{EditEvent::Kind::Line, text_, cut_bytes_};
      cut_bytes_ = 0;
      if (record_history_ && !text_.empty() && (history_.empty() || history_.back() != text_)) {
        history_.push_back(text_);
        if (history_.size() > kHistoryLines) history_.pop_front();
      }
      text_.clear();
      draft_.clear();
      cursor_ = 0;
      recalled_ = history_.size();
      events.push_back(std::move(e));
      return;
    }
    case '\x03':  // Ctrl-C: clears a line being typed (as shells do); on an empty line, interrupts
      if (text_.empty()) events.push_back({EditEvent::Kind::Interrupt, {}});
      text_.clear();
      cut_bytes_ = 0;
      cursor_ = 0;
      recalled_ = history_.size();
      return;
    case '\x04':  // Ctrl-D: end of input on an empty line, else delete under the cursor
      if (text_.empty()) events.push_back({EditEvent::Kind::EndOfInput, {}});
      else if (cursor_ < text_.size()) text_.erase(cursor_, 1);
      return;
    case '\x7f':
    case '\b':
      if (cursor_ > 0) text_.erase(--cursor_, 1);
      return;
    case '\x01': cursor_ = 0; return;             // Ctrl-A
    case '\x05': cursor_ = text_.size(); return;  // Ctrl-E
    case '\x02': if (cursor_ > 0) --cursor_; return;             // Ctrl-B
    case '\x06': if (cursor_ < text_.size()) ++cursor_; return;  // Ctrl-F
    case '\x15': text_.erase(0, cursor_); cursor_ = 0; return;   // Ctrl-U
    case '\x0b': text_.erase(cursor_); return;                   // Ctrl-K
    case '\x10': recall(-1); return;                             // Ctrl-P
    case '\x0e': recall(+1); return;                             // Ctrl-N
    case '\x17': {                                               // Ctrl-W
      std::size_t start = cursor_;
      while (start > 0 && !is_word_char(text_[start - 1])) --start;
      while (start > 0 && is_word_char(text_[start - 1])) --start;
      text_.erase(start, cursor_ - start);
      cursor_ = start;
      return;
    }
    default:
      // Other control characters are ignored; text (UTF-8 bytes included) is inserted.
      if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') insert(c == '\t' ? ' ' : c);
  }
}

void LineEditor::insert(char c) {
  if (text_.size() >= kMaxLineBytes) {
    ++cut_bytes_;
    return;
  }
  text_.insert(cursor_++, 1, c);
}

void LineEditor::escape_done(std::string_view sequence) {
  const char last = sequence.back();
  if (sequence == "\x1b[3~") {  // Delete
    if (cursor_ < text_.size()) text_.erase(cursor_, 1);
    return;
  }
  if (sequence == "\x1b[1~" || sequence == "\x1b[7~") {  // Home
    cursor_ = 0;
    return;
  }
  if (sequence == "\x1b[4~" || sequence == "\x1b[8~") {  // End
    cursor_ = text_.size();
    return;
  }
  if (sequence.size() < 3 || (sequence[1] != '[' && sequence[1] != 'O')) return;
  switch (last) {
    case 'A': recall(-1); break;
    case 'B': recall(+1); break;
    case 'C': if (cursor_ < text_.size()) ++cursor_; break;
    case 'D': if (cursor_ > 0) --cursor_; break;
    case 'H': cursor_ = 0; break;
    case 'F': cursor_ = text_.size(); break;
    default: break;  // other keys (F1, PageUp, ...) do nothing
  }
}

void LineEditor::recall(int direction) {
  if (history_.empty()) return;
  if (recalled_ == history_.size()) draft_ = text_;
  if (direction < 0 && recalled_ > 0) --recalled_;
  else if (direction > 0 && recalled_ < history_.size()) ++recalled_;
  else return;
  text_ = recalled_ == history_.size() ? draft_ : history_[recalled_];
  cursor_ = text_.size();
}

std::string LineEditor::render(std::string_view prompt) const {
  std::string out(prompt);
  out += text_;
  const std::size_t back = text_.size() - cursor_;
  if (back > 0) out += "\x1b[" + std::to_string(back) + "D";
  return out;
}

}  // namespace ddplaunch
