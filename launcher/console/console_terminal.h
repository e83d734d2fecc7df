// ConsoleTerminal: the person's side of the debug console on a real terminal. While the
// console waits at a prompt the terminal is in raw mode and keys go through a LineEditor
// (arrows, history, Ctrl-U ...: the ranks' debuggers only ever see whole lines); the prompt
// and the line being typed stay below every other output (output/prompt_line.h); Enter hands
// the line over. With no prompt the terminal is left as it was (Ctrl-C stops the job as
// always) and a typed line is still the console's (`:attach 3 --gdb` on a rank that never
// stopped, `:list`, or a line for rank 0's stdin). The terminal's settings are restored when
// the prompt goes and at the end.
#pragma once

#include <termios.h>

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "debug/debug_console.h"
#include "output/line_editor.h"

namespace ddplaunch {

struct ConsoleInput {
  std::function<void(const std::string& line)> on_line;
  std::function<void()> on_end_of_input;  // Ctrl-D on an empty line
  std::function<void()> on_interrupt;     // Ctrl-C on an empty line
};

class ConsoleTerminal : public debug::ConsoleScreen {
 public:
  // nullptr when stdin and stdout are not both a terminal (the console then has none here).
  static std::unique_ptr<ConsoleTerminal> open(boost::asio::io_context& io, ConsoleInput input);
  ConsoleTerminal(boost::asio::io_context& io, int fd, ConsoleInput input);
  ~ConsoleTerminal() override;

  void print(std::string_view lines) override;
  void set_prompt(std::optional<std::string> prompt) override;
  void hide_typing(bool hidden) override;
  void close();  // the job ends: no prompt, the terminal as it was, stop reading

 private:
  void read_keys();
  void on_keys(std::string_view bytes);
  void on_cooked_keys(std::string_view bytes);
  void redraw();
  void enter_raw_mode();
  void leave_raw_mode();

  boost::asio::posix::stream_descriptor keys_;
  ConsoleInput input_;
  LineEditor editor_;
  std::optional<std::string> prompt_;
  bool hidden_ = false;  // a rank's getpass prompt: the typed line is neither drawn nor kept
  std::optional<termios> saved_;  // the terminal's settings before raw mode
  bool reading_ = false;
  bool closed_ = false;
  // While one read's keys are handled, redraws wait for its end: a paste is drawn once per read,
  // not once per key or per line in it.
  bool in_key_batch_ = false;
  bool redraw_due_ = false;
  std::string cooked_;  // a line typed while no prompt is shown (the terminal echoes and edits it)
  std::size_t cooked_cut_bytes_ = 0;  // what was typed past the bound on that line
  std::array<char, 16384> buffer_;
};

}  // namespace ddplaunch
