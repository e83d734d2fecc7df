// How the debug console travels when the person sits at a fan-out's terminal (--hosts): the
// master's ddplaunch writes the console on its stdout as marked lines, which the fan-out
// shows on its own terminal (its prompt kept below the output, its line editor), and the
// fan-out sends each typed line back on the master's stdin control channel. A worker's line
// can never carry the marks: workers' lines are prefixed, and text relayed from ranks has
// its control characters made visible first.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ddplaunch::debug {

inline constexpr std::string_view kConsoleLineMark = "\x01" "ddplaunch-console ";  // + one console line
inline constexpr std::string_view kPromptMark = "\x01" "ddplaunch-prompt ";        // + the prompt ("": answering)
inline constexpr std::string_view kNoPromptMark = "\x01" "ddplaunch-no-prompt";     // no rank stopped
inline constexpr std::string_view kConsoleInputMark = "DEBUG ";                 // fan-out → master's stdin

// A line from the master's stdout, read by the fan-out.
struct RelayedConsoleLine {
  enum class Kind { Text, Prompt, NoPrompt } kind = Kind::Text;
  std::string text;  // Text: the console line; Prompt: the prompt
};
// nullopt: an ordinary line (not the console's).
std::optional<RelayedConsoleLine> parse_relayed_console_line(std::string_view line);

}  // namespace ddplaunch::debug
