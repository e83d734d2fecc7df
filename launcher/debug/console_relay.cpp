// Reading the console's marked lines.
#include "debug/console_relay.h"

namespace ddplaunch::debug {

std::optional<RelayedConsoleLine> parse_relayed_console_line(std::string_view line) {
  if (line.substr(0, kConsoleLineMark.size()) == kConsoleLineMark)
    return RelayedConsoleLine{RelayedConsoleLine::Kind::Text, std::string(line.substr(kConsoleLineMark.size()))};
  if (line.substr(0, kPromptMark.size()) == kPromptMark)
    return RelayedConsoleLine{RelayedConsoleLine::Kind::Prompt, std::string(line.substr(kPromptMark.size()))};
  if (line == kNoPromptMark) return RelayedConsoleLine{RelayedConsoleLine::Kind::NoPrompt, {}};
  return std::nullopt;
}

}  // namespace ddplaunch::debug
