// spdlog configuration shared by every part of the launcher.
#include "log_setup.h"

#include <unistd.h>

#include <memory>
#include <string>
#include <string_view>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "output/live_status_line.h"
#include "output/terminal_writer.h"
#include "output/prompt_line.h"
#include "ddplaunch/base/exit_codes.h"

namespace ddplaunch {

namespace {
// Log lines go through the terminal queue (output/terminal_writer.h: a terminal nobody reads
// never stops the event loop), after the live status line (join progress) is erased so that a
// log line never continues it, and below the debugger's prompt. The level is coloured as
// spdlog's colour sink does when stderr is a terminal.
class TerminalSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  TerminalSink() : colors_(::isatty(STDERR_FILENO) == 1) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    std::string_view text(formatted.data(), formatted.size());
    std::string line;
    if (colors_ && msg.color_range_end > msg.color_range_start && msg.color_range_end <= text.size()) {
      line.append(text.substr(0, msg.color_range_start)).append(color_of(msg.level));
      line.append(text.substr(msg.color_range_start, msg.color_range_end - msg.color_range_start)).append("\033[m");
      line.append(text.substr(msg.color_range_end));
    } else {
      line.assign(text);
    }
    stderr_status_line().erase();
    ScopedPromptHide below_the_prompt;
    terminal_write(STDERR_FILENO, line);
  }
  void flush_() override {}

 private:
  static std::string_view color_of(spdlog::level::level_enum level) {
    switch (level) {
      case spdlog::level::info: return "\033[32m";
      case spdlog::level::warn: return "\033[33m\033[1m";
      case spdlog::level::err: return "\033[31m\033[1m";
      case spdlog::level::critical: return "\033[1m\033[41m";
      case spdlog::level::debug: return "\033[36m";
      default: return "\033[37m";
    }
  }
  const bool colors_;
};
}  // namespace

void init_logging() {
  auto logger = std::make_shared<spdlog::logger>("ddplaunch", std::make_shared<TerminalSink>());
  spdlog::register_logger(logger);
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%H:%M:%S.%e ddplaunch %^%l%$: %v");
  spdlog::set_level(spdlog::level::info);
}

void set_log_node(int node_rank, int node_count) {
  if (node_count > 1)
    spdlog::set_pattern(fmt::format("%H:%M:%S.%e ddplaunch[node {}] %^%l%$: %v", node_rank));
}

void log_decision(const decision::Log& log) {
  auto level = log.severity == decision::Severity::Error  ? spdlog::level::err
               : log.severity == decision::Severity::Warn ? spdlog::level::warn
                                                          : spdlog::level::info;
  spdlog::log(level, "{}", log.text);
}

int log_errors_and_refuse(const std::vector<std::string>& errors) {
  for (const auto& e : errors) spdlog::error("{}", e);
  return kExitConfigError;
}

}  // namespace ddplaunch
