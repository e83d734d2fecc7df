// Token line and stdin control channel: see stdin_control.h.
#include "fanout/stdin_control.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "debug/console_relay.h"
#include "output/line_splitter.h"

namespace ddplaunch::fanout {

namespace {
constexpr std::size_t kMaxTokenLine = 4096;
}  // namespace

TokenLine read_token_line(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string line;
  while (line.size() <= kMaxTokenLine) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    int ready = left.count() > 0 ? poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0)
      return {{}, fmt::format("--token-stdin: no token line on stdin within {} s (the fan-out writes it at once; "
                              "when typing it, end it with Enter)",
                              timeout.count() / 1000)};
    char c = 0;
    ssize_t n = ready < 0 ? -1 : read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {{}, fmt::format("--token-stdin: cannot read stdin: {}", std::strerror(errno))};
    if (n == 0 || c == '\n') break;
    line += c;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > kMaxTokenLine) return {{}, fmt::format("--token-stdin: the token line is longer than {} bytes", kMaxTokenLine)};
  if (line.empty()) return {{}, "--token-stdin: stdin's first line is empty (or stdin ended): no token to use"};
  return {std::move(line), {}};
}

int control_signal(std::string_view line) {
  constexpr std::pair<std::string_view, int> kSignals[] = {
      {"SIGINT", SIGINT}, {"SIGTERM", SIGTERM}, {"SIGHUP", SIGHUP}, {"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}};
  for (const auto& [name, number] : kSignals)
    if (line == name) return number;
  return 0;
}

void watch_stdin_for_stop(int fd, std::function<void(std::string line)> on_console_line) {
  std::thread([fd, on_console_line = std::move(on_console_line)] {
    LineSplitter lines(8192);
    auto on_line = [&](std::string_view line) {
      if (line.substr(0, debug::kConsoleInputMark.size()) == debug::kConsoleInputMark) {
        if (on_console_line) on_console_line(std::string(line.substr(debug::kConsoleInputMark.size())));
        return;
      }
      if (int sig = control_signal(line)) kill(getpid(), sig);
      else spdlog::warn("--stop-on-stdin-eof: ignoring '{:.40}' on stdin (expected a signal name such as SIGINT)", line);
    };
    char buffer[256];
    for (;;) {
      ssize_t n = read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      lines.feed(std::string_view(buffer, static_cast<std::size_t>(n)), on_line);
    }
    spdlog::warn("stdin ended (the fan-out that started this node, or its ssh connection, is gone): stopping as on "
                 "SIGTERM");
    kill(getpid(), SIGTERM);
  }).detach();
}

}  // namespace ddplaunch::fanout
