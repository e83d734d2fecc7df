// Join progress: live on a terminal, plain lines on change otherwise.
#include "output/join_progress.h"

#include <ctime>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace ddplaunch {

namespace {
constexpr auto kPlainRepeat = std::chrono::seconds(30);
}

std::string JoinProgress::update(int joined, int expected, const std::string& missing, Clock::time_point now) {
  if (!first_) first_ = now;
  const std::string text = fmt::format("waiting for nodes: {}/{} joined (missing: {})", joined, expected, missing);
  if (line_.on_terminal()) {
    const auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - *first_).count();
    std::time_t wall = std::time(nullptr);
    char clock[16];
    std::strftime(clock, sizeof clock, "%H:%M:%S", std::localtime(&wall));
    line_.show(fmt::format("{} ddplaunch: {}, {} s", clock, text, waited));
    return {};
  }
  if (text == last_text_ && last_logged_ && now - *last_logged_ < kPlainRepeat) return {};
  last_text_ = text;
  last_logged_ = now;
  return text;
}

void show_join_progress(int joined, int expected, const std::string& missing) {
  static JoinProgress progress(stderr_status_line());
  std::string line = progress.update(joined, expected, missing, JoinProgress::Clock::now());
  if (!line.empty()) spdlog::info("{}", line);
}

}  // namespace ddplaunch
