// The remote debug console client.
#include "console/remote_console.h"

#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <functional>
#include <optional>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "console/console_terminal.h"
#include "ddplaunch/rendezvous/client.h"
#include "output/worker_output.h"
#include "output/terminal_writer.h"

namespace ddplaunch {

namespace {
constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr auto kQueryBound = std::chrono::seconds(5);
constexpr std::size_t kFirstLook = 4096;  // of what the console printed before this client came
}  // namespace

TranscriptPiece parse_transcript_piece(const std::string& answer) {
  TranscriptPiece piece;
  const std::size_t first = answer.find('\n');
  if (first == std::string::npos) return piece;
  const std::size_t second = answer.find('\n', first + 1);
  if (second == std::string::npos) return piece;
  char* end = nullptr;
  piece.end = std::strtoull(answer.c_str(), &end, 10);
  if (end != answer.c_str() + first) return piece;
  const std::string prompt_line = answer.substr(first + 1, second - first - 1);
  if (prompt_line != "-" && (prompt_line.empty() || prompt_line[0] != 'P')) return piece;
  piece.has_prompt = prompt_line != "-";
  if (piece.has_prompt) piece.prompt = prompt_line.substr(1);
  piece.text = answer.substr(second + 1);
  piece.valid = true;
  return piece;
}

int run_remote_console(const RemoteConsoleTarget& target) {
  boost::asio::io_context io;
  rendezvous::QueryFailure failure;
  auto ask = [&](const std::string& query) {
    return rendezvous::query_master(target.host, target.port, target.job_id, target.token, query, kQueryBound, failure);
  };
  // The first look: is there a console, may we use it?
  TranscriptPiece piece = parse_transcript_piece(ask("debug poll 0"));
  const std::string where = fmt::format("{}:{}", target.host, target.port);
  if (failure.failed()) {
    spdlog::error("cannot reach the debug console at {}: {}", where, failure.text);
    return 1;
  }
  if (!piece.valid) {
    spdlog::error("the master at {} has no debug console for this client: {}", where, ask("debug poll 0"));
    return 1;
  }
  std::size_t offset = piece.end >= kFirstLook ? piece.end - kFirstLook : 0;
  bool ended = false;
  std::optional<std::string> shown_prompt;
  auto send_line = [&](const std::string& line) {
    shown_prompt.reset();  // the terminal took its prompt away with the line: the next poll shows it again
    const std::string answer = ask("debug line " + line);
    if (failure.failed()) ended = true, io.stop();
    else if (answer != "ok") write_line(OutputStream::Stderr, answer);
  };
  std::unique_ptr<ConsoleTerminal> terminal = ConsoleTerminal::open(
      io, ConsoleInput{.on_line = send_line, .on_end_of_input = [&] { io.stop(); }, .on_interrupt = [&] { io.stop(); }});
  spdlog::info("attached to the debug console of job {} at {} (Ctrl-C or Ctrl-D leaves it; the job goes on)",
               target.job_id, where);
  if (target.gdb_rank >= 0) send_line(fmt::format(":attach {} --gdb", target.gdb_rank));

  // Off a terminal: plain lines from stdin, on a thread (a blocking read).
  std::thread stdin_reader;
  if (!terminal) {
    stdin_reader = std::thread([&io, &send_line] {
      std::string line;
      for (char c; ::read(STDIN_FILENO, &c, 1) == 1;) {
        if (c != '\n') {
          line += c;
          continue;
        }
        boost::asio::post(io, [line, &send_line] { send_line(line); });
        line.clear();
      }
    });
    stdin_reader.detach();
  }
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) io.stop();
  });
  boost::asio::steady_timer poll_timer(io);
  std::function<void()> poll = [&] {
    TranscriptPiece next = parse_transcript_piece(ask(fmt::format("debug poll {}", offset)));
    if (failure.failed() || !next.valid) {
      ended = true;
      io.stop();
      return;
    }
    if (!next.text.empty()) {
      if (terminal) terminal->print(next.text);
      else terminal_write(STDOUT_FILENO, next.text);
    }
    offset = next.end;
    std::optional<std::string> prompt = next.has_prompt ? std::optional<std::string>(next.prompt) : std::nullopt;
    if (prompt != shown_prompt) {
      shown_prompt = prompt;
      if (terminal) terminal->set_prompt(prompt);
      else if (prompt && !prompt->empty()) terminal_write(STDOUT_FILENO, *prompt + "\n");
    }
    poll_timer.expires_after(kPollInterval);
    poll_timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) poll();
    });
  };
  poll();
  io.run();
  if (terminal) terminal->close();
  if (ended) spdlog::info("the job's master no longer answers: the job has ended");
  return 0;
}

}  // namespace ddplaunch
