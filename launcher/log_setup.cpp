// spdlog configuration shared by every part of the launcher.
#include "log_setup.h"

#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "output/live_status_line.h"
#include "output/prompt_line.h"

namespace ddplaunch {

namespace {
// The colour sink on stderr, after erasing the live status line (join progress) so that a
// log line never continues it.
class StatusAwareSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  StatusAwareSink() : inner_(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    stderr_status_line().erase();
    ScopedPromptHide below_the_prompt;
    inner_->log(msg);
  }
  void flush_() override { inner_->flush(); }
  void set_pattern_(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};
}  // namespace

void init_logging() {
  auto logger = std::make_shared<spdlog::logger>("ddplaunch", std::make_shared<StatusAwareSink>());
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

}  // namespace ddplaunch
