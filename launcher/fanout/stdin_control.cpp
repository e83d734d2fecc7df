// Token line and stdin control channel: see stdin_control.h.
#include "fanout/stdin_control.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <optional>
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
constexpr std::string_view kEnvironmentHeader = "DDPLAUNCH-ENV ";

using Clock = std::chrono::steady_clock;

// Waits until `fd` is readable or `deadline`: 1 readable, 0 timed out, -1 error (errno).
int wait_readable(int fd, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return 0;
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    return ready < 0 ? -1 : ready > 0 ? 1 : 0;
  }
}

struct ReadOutcome {
  std::string text;
  bool timed_out = false;
  std::string os_error;  // non-empty: read failed
};

// One line (without its newline, a trailing \r dropped), read byte by byte so that nothing
// after it is consumed; more than `limit` bytes stops the read (the caller sees the length).
ReadOutcome read_line(int fd, Clock::time_point deadline, std::size_t limit) {
  ReadOutcome out;
  while (out.text.size() <= limit) {
    int ready = wait_readable(fd, deadline);
    if (ready == 0) return out.timed_out = true, out;
    char c = 0;
    ssize_t n = ready < 0 ? -1 : read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return out.os_error = std::strerror(errno), out;
    if (n == 0 || c == '\n') break;
    out.text += c;
  }
  if (!out.text.empty() && out.text.back() == '\r') out.text.pop_back();
  return out;
}

// Exactly `size` bytes (fewer: stdin ended first).
ReadOutcome read_exactly(int fd, Clock::time_point deadline, std::size_t size) {
  ReadOutcome out;
  out.text.resize(size);
  std::size_t done = 0;
  while (done < size) {
    int ready = wait_readable(fd, deadline);
    if (ready == 0) return out.text.resize(done), out.timed_out = true, out;
    ssize_t n = ready < 0 ? -1 : read(fd, out.text.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return out.text.resize(done), out.os_error = std::strerror(errno), out;
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.text.resize(done);
  return out;
}

// A decimal count, digits only (no sign, no blanks); nullopt when not one or over `limit`.
std::optional<std::size_t> parse_size(std::string_view text, std::size_t limit) {
  std::size_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > limit) return std::nullopt;
  return value;
}

ReceivedVariables refused(std::string why) {
  return {{}, fmt::format("--env-stdin: the variables the fan-out sent on stdin are not readable: {} — the fan-out "
                          "and this ddplaunch must be the same version",
                          why)};
}
}  // namespace

TokenLine read_token_line(int fd, std::chrono::milliseconds timeout) {
  ReadOutcome line = read_line(fd, Clock::now() + timeout, kMaxTokenLine);
  if (line.timed_out)
    return {{}, fmt::format("--token-stdin: no token line on stdin within {} s (the fan-out writes it at once; "
                            "when typing it, end it with Enter)",
                            timeout.count() / 1000)};
  if (!line.os_error.empty()) return {{}, fmt::format("--token-stdin: cannot read stdin: {}", line.os_error)};
  if (line.text.size() > kMaxTokenLine) return {{}, fmt::format("--token-stdin: the token line is longer than {} bytes", kMaxTokenLine)};
  if (line.text.empty()) return {{}, "--token-stdin: stdin's first line is empty (or stdin ended): no token to use"};
  return {std::move(line.text), {}};
}

bool is_variable_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string environment_block(const Variables& variables) {
  std::string payload;
  for (const auto& [name, value] : variables) payload.append(name).append(1, '\0').append(value).append(1, '\0');
  return fmt::format("{}{} {}\n", kEnvironmentHeader, variables.size(), payload.size()) + payload;
}

ReceivedVariables parse_environment_payload(std::string_view payload, std::size_t count) {
  ReceivedVariables out;
  while (!payload.empty()) {
    const std::size_t name_end = payload.find('\0');
    const std::size_t value_end = name_end == std::string_view::npos ? name_end : payload.find('\0', name_end + 1);
    if (value_end == std::string_view::npos)
      return refused(fmt::format("variable {} is cut short (no NUL after its name or value)", out.variables.size() + 1));
    const std::string_view name = payload.substr(0, name_end);
    if (!is_variable_name(name))
      return refused(fmt::format("variable {} has no valid name ('{:.40}')", out.variables.size() + 1, name));
    out.variables.emplace_back(std::string(name), std::string(payload.substr(name_end + 1, value_end - name_end - 1)));
    payload.remove_prefix(value_end + 1);
  }
  if (out.variables.size() != count)
    return refused(fmt::format("the header announces {} variable(s), the block holds {}", count, out.variables.size()));
  return out;
}

ReceivedVariables read_environment_block(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  ReadOutcome header = read_line(fd, deadline, 64);
  if (header.timed_out) return refused(fmt::format("no header line within {} s", timeout.count() / 1000));
  if (!header.os_error.empty()) return refused("cannot read stdin: " + header.os_error);
  std::string_view words = header.text;
  const std::size_t blank = words.find(' ', kEnvironmentHeader.size());
  if (words.substr(0, kEnvironmentHeader.size()) != kEnvironmentHeader || blank == std::string_view::npos)
    return refused(fmt::format("expected a line '{}<count> <bytes>', got '{:.40}'", kEnvironmentHeader, words));
  const auto count = parse_size(words.substr(kEnvironmentHeader.size(), blank - kEnvironmentHeader.size()),
                                kMaxEnvironmentBlockBytes / 2);
  const auto bytes = parse_size(words.substr(blank + 1), kMaxEnvironmentBlockBytes);
  if (!count || !bytes)
    return refused(fmt::format("bad header '{:.40}' (counts are decimal; the block is at most {} bytes)", words,
                               kMaxEnvironmentBlockBytes));
  ReadOutcome block = read_exactly(fd, deadline, *bytes);
  if (block.timed_out || !block.os_error.empty() || block.text.size() != *bytes)
    return refused(fmt::format("{} of the announced {} bytes came{}", block.text.size(), *bytes,
                               block.timed_out ? " in time" : block.os_error.empty() ? " before stdin ended" : ": " + block.os_error));
  return parse_environment_payload(block.text, *count);
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
