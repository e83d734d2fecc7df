// A line typed at the debug console, wherever it was typed (the terminal that started the job,
// a `ddplaunch debug` client's terminal or its stdin): bounded, and shown to the other
// terminals as one printable line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "ddplaunch/rendezvous/printable.h"
#include "output/line_editor.h"

namespace ddplaunch {

// No debugger command is longer; a paste beyond it is cut, and the person is told.
inline constexpr std::size_t kMaxConsoleLineBytes = LineEditor::kMaxLineBytes;

// What the person is told when `dropped` bytes of a line were cut off (ends with '\n').
inline std::string line_cut_notice(std::size_t dropped) {
  return fmt::format("line cut at {} bytes: the {} byte(s) after it were dropped (no debugger command is longer)\n",
                     kMaxConsoleLineBytes, dropped);
}

// How a line typed at another terminal is shown at the console (ends with '\n'): its control
// characters made visible, so that it can neither drive a terminal nor start a line of its own.
inline std::string another_terminal_echo(std::string_view line) {
  return "[another terminal] " + rendezvous::printable(line) + "\n";
}

}  // namespace ddplaunch
