// The debug console's terminal: raw mode, keys, prompt redraws.
#include "console/console_terminal.h"

#include <fcntl.h>
#include <unistd.h>

#include "console/typed_line.h"
#include "output/prompt_line.h"
#include "output/worker_output.h"
#include "output/terminal_writer.h"

namespace ddplaunch {

std::unique_ptr<ConsoleTerminal> ConsoleTerminal::open(boost::asio::io_context& io, ConsoleInput input) {
  if (::isatty(STDIN_FILENO) != 1 || ::isatty(STDOUT_FILENO) != 1) return nullptr;
  // A description of our own (Asio makes it non-blocking): the shell's stdin stays blocking.
  const char* name = ::ttyname(STDIN_FILENO);
  const int fd = name ? ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC) : -1;
  if (fd < 0) return nullptr;
  return std::make_unique<ConsoleTerminal>(io, fd, std::move(input));
}

ConsoleTerminal::ConsoleTerminal(boost::asio::io_context& io, int fd, ConsoleInput input)
    : keys_(io, fd), input_(std::move(input)) {
  read_keys();
}

ConsoleTerminal::~ConsoleTerminal() { close(); }

void ConsoleTerminal::close() {
  if (closed_) return;
  closed_ = true;
  stdout_prompt_line().show("");
  leave_raw_mode();
  boost::system::error_code ignored;
  keys_.close(ignored);
}

void ConsoleTerminal::print(std::string_view lines) {
  ScopedPromptHide below_the_prompt;
  terminal_write(STDOUT_FILENO, lines);
}

void ConsoleTerminal::set_prompt(std::optional<std::string> prompt) {
  if (closed_) return;
  prompt_ = std::move(prompt);
  if (!prompt_) {
    stdout_prompt_line().show("");
    leave_raw_mode();
    return;
  }
  enter_raw_mode();
  redraw();
  read_keys();
}

void ConsoleTerminal::hide_typing(bool hidden) {
  hidden_ = hidden;
  editor_.record_history(!hidden);
}

void ConsoleTerminal::redraw() {
  if (in_key_batch_) {
    redraw_due_ = true;
    return;
  }
  stdout_prompt_line().show(!prompt_ ? std::string() : hidden_ ? *prompt_ : editor_.render(*prompt_));
}

void ConsoleTerminal::read_keys() {
  if (reading_ || closed_) return;
  reading_ = true;
  keys_.async_read_some(boost::asio::buffer(buffer_), [this](const boost::system::error_code& ec, std::size_t n) {
    reading_ = false;
    if (ec || closed_) return;
    on_keys(std::string_view(buffer_.data(), n));
    read_keys();
  });
}

// One read's keys (a paste comes in reads of up to the buffer's size): lines handed over as
// they end, then the prompt line drawn once, and only when the read changed it (keys past the
// line's bound change nothing).
void ConsoleTerminal::on_keys(std::string_view bytes) {
  if (!prompt_) return on_cooked_keys(bytes);
  const std::string drawn = editor_.render(*prompt_);
  in_key_batch_ = true;
  redraw_due_ = false;
  for (EditEvent& event : editor_.feed(bytes)) {
    redraw_due_ = true;
    switch (event.kind) {
      case EditEvent::Kind::Line: {
        // The prompt and the line stay on the screen as typed; the console answers below.
        const std::string committed = *prompt_ + (hidden_ ? std::string() : event.line) + "\n";
        stdout_prompt_line().show("");
        terminal_write(STDOUT_FILENO, committed);
        if (event.cut_bytes > 0) terminal_write(STDOUT_FILENO, line_cut_notice(event.cut_bytes));
        prompt_ = std::string();  // until the console shows its next prompt; keys typed meanwhile are kept
        if (input_.on_line) input_.on_line(event.line);
        break;
      }
      case EditEvent::Kind::EndOfInput:
        terminal_write(STDOUT_FILENO, "\n");
        if (input_.on_end_of_input) input_.on_end_of_input();
        break;
      case EditEvent::Kind::Interrupt:
        if (input_.on_interrupt) input_.on_interrupt();
        break;
    }
    if (!prompt_ || closed_) break;  // the console took the prompt away (or the job ends)
  }
  in_key_batch_ = false;
  if (!prompt_ || closed_) return;
  if (redraw_due_ || editor_.render(*prompt_) != drawn) redraw();
}

// Cooked mode: the terminal echoes and edits; whole lines come (a ':' line is a console
// command, another goes to rank 0's stdin, said by the console). A line is kept up to the
// bound; the rest of it is dropped, said.
void ConsoleTerminal::on_cooked_keys(std::string_view bytes) {
  for (const char c : bytes) {
    if (c != '\n') {
      if (cooked_.size() < kMaxConsoleLineBytes) cooked_ += c;
      else ++cooked_cut_bytes_;
      continue;
    }
    const std::string line = std::move(cooked_);
    const std::size_t cut = cooked_cut_bytes_;
    cooked_.clear();
    cooked_cut_bytes_ = 0;
    if (!input_.on_line) continue;
    if (cut > 0) print(line_cut_notice(cut));
    input_.on_line(line);
  }
}

void ConsoleTerminal::enter_raw_mode() {
  if (saved_) return;
  termios now{};
  if (::tcgetattr(keys_.native_handle(), &now) != 0) return;
  saved_ = now;
  // Keys one by one, not echoed, Ctrl-C/Ctrl-Z as bytes; output processing (\n → \r\n) kept.
  now.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG | IEXTEN);
  now.c_iflag &= ~static_cast<tcflag_t>(IXON);
  now.c_cc[VMIN] = 1;
  now.c_cc[VTIME] = 0;
  ::tcsetattr(keys_.native_handle(), TCSANOW, &now);
}

void ConsoleTerminal::leave_raw_mode() {
  if (!saved_) return;
  if (keys_.is_open()) ::tcsetattr(keys_.native_handle(), TCSANOW, &*saved_);
  saved_.reset();
}

}  // namespace ddplaunch
