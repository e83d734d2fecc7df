// The remote debug console client.
#include "console/remote_console.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "console/console_master_link.h"
#include "console/console_terminal.h"
#include "console/stdin_lines.h"
#include "console/typed_line.h"
#include "ddplaunch/rendezvous/printable.h"
#include "output/terminal_writer.h"
#include "output/worker_output.h"

namespace ddplaunch {

namespace {
constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr std::size_t kFirstLook = 4096;  // of what the console printed before this client came

// The echoes of this client's own lines, recognised in the transcript so that a line typed here
// is not shown again as another terminal's. The master prints a client's line before it
// answers that client, so the first poll after a line carries the line's echo; what that poll
// does not carry (cut from a transcript that overflowed) is forgotten.
class OwnEchoes {
 public:
  void sent(std::string_view line) { expected_.push_back(another_terminal_echo(line)); }
  std::string remove_from(std::string text) {
    std::size_t from = 0;
    for (const std::string& echo : expected_) {
      for (std::size_t at = text.find(echo, from); at != std::string::npos; at = text.find(echo, at + 1)) {
        if (at != 0 && text[at - 1] != '\n') continue;  // only a whole line
        text.erase(at, echo.size());
        from = at;
        break;
      }
    }
    expected_.clear();
    return text;
  }

 private:
  std::vector<std::string> expected_;
};

// One attached client: polls the transcript, shows it (made printable: a squatter or a rank
// cannot drive this terminal) with the console's prompt below it, sends each typed line.
class RemoteConsoleSession {
 public:
  enum class Outcome { Left, Ended, Refused };

  RemoteConsoleSession(boost::asio::io_context& io, const ConsoleMasterLink& master, std::size_t offset)
      : io_(io), master_(master), offset_(offset), skip_partial_line_(offset > 0), poll_timer_(io) {}

  void attach_terminal(ConsoleTerminal* terminal) { terminal_ = terminal; }
  void read_stdin(std::shared_ptr<StdinLines> lines) { stdin_ = std::move(lines); }

  void send_line(const std::string& line) {
    shown_prompt_.reset();  // the terminal took its prompt away with the line: the next poll shows it again
    const MasterAnswer answer = master_.ask("debug line " + line, ConsoleMasterLink::Repeat::OnlyWhereNotCarriedOut);
    switch (answer.kind) {
      case MasterAnswer::Kind::Answered:
        echoes_.sent(line);
        if (answer.text != "ok") show_note(rendezvous::printable_lines(answer.text));
        return;
      case MasterAnswer::Kind::Unsure:
        show_note(fmt::format("the line may not have reached the console ({}): type it again if no answer follows\n",
                              answer.text));
        return;
      case MasterAnswer::Kind::Refused: return end(Outcome::Refused, answer.text);
      case MasterAnswer::Kind::Gone: return end(Outcome::Ended, answer.text);
    }
  }

  void poll() {
    if (stdin_)
      for (const StdinLine& line : stdin_->take()) {
        if (line.cut_bytes > 0) show_note(line_cut_notice(line.cut_bytes));
        send_line(line.text);
        if (ended_) return;
      }
    const MasterAnswer answer = master_.ask(fmt::format("debug poll {}", offset_), ConsoleMasterLink::Repeat::AfterAnyDrop);
    if (answer.kind != MasterAnswer::Kind::Answered)
      return end(answer.kind == MasterAnswer::Kind::Refused ? Outcome::Refused : Outcome::Ended, answer.text);
    const TranscriptPiece piece = parse_transcript_piece(answer.text);
    if (!piece.valid)
      return end(Outcome::Refused, "it answered a poll with: " + rendezvous::printable(answer.text.substr(0, 512)));
    show(piece);
    poll_timer_.expires_after(kPollInterval);
    poll_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec && !ended_) poll();
    });
  }

  Outcome outcome() const { return outcome_; }
  const std::string& why() const { return why_; }

 private:
  void show(const TranscriptPiece& piece) {
    std::string text = echoes_.remove_from(rendezvous::printable_lines(piece.text));
    if (skip_partial_line_ && !text.empty()) {  // the first look starts inside a line: up to its end
      skip_partial_line_ = false;
      text.erase(0, std::min(text.find('\n'), text.size() - 1) + 1);
    }
    if (!text.empty()) {
      if (terminal_) terminal_->print(text);
      else terminal_write(STDOUT_FILENO, text);
    }
    offset_ = piece.end;
    std::optional<std::string> prompt;
    if (piece.has_prompt) prompt = rendezvous::printable(piece.prompt);
    if (prompt == shown_prompt_) return;
    shown_prompt_ = prompt;
    if (terminal_) terminal_->set_prompt(prompt);
    else if (prompt && !prompt->empty()) terminal_write(STDOUT_FILENO, *prompt + "\n");
  }

  void show_note(const std::string& text) {
    if (terminal_) terminal_->print(text);
    else write_line(OutputStream::Stderr, text.substr(0, text.size() - (!text.empty() && text.back() == '\n')));
  }

  void end(Outcome outcome, std::string why) {
    ended_ = true;
    outcome_ = outcome;
    why_ = std::move(why);
    io_.stop();
  }

  boost::asio::io_context& io_;
  const ConsoleMasterLink& master_;
  ConsoleTerminal* terminal_ = nullptr;
  std::shared_ptr<StdinLines> stdin_;
  std::size_t offset_;
  bool skip_partial_line_;
  std::optional<std::string> shown_prompt_;
  OwnEchoes echoes_;
  boost::asio::steady_timer poll_timer_;
  bool ended_ = false;
  Outcome outcome_ = Outcome::Left;
  std::string why_;
};

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
  const ConsoleMasterLink master(target);
  // The first look: is there a console, may we use it?
  const MasterAnswer first = master.ask("debug poll 0", ConsoleMasterLink::Repeat::AfterAnyDrop);
  if (first.kind != MasterAnswer::Kind::Answered) {
    spdlog::error("cannot reach the debug console at {}: {}", master.where(), first.text);
    return 1;
  }
  const TranscriptPiece piece = parse_transcript_piece(first.text);
  if (!piece.valid) {
    spdlog::error("the master at {} has no debug console for this client: {}", master.where(),
                  rendezvous::printable(first.text.substr(0, 512)));
    return 1;
  }
  boost::asio::io_context io;
  // From one byte before the first look's start: the partial line there is skipped whole.
  RemoteConsoleSession session(io, master, piece.end > kFirstLook ? piece.end - kFirstLook - 1 : 0);
  std::unique_ptr<ConsoleTerminal> terminal = ConsoleTerminal::open(
      io, ConsoleInput{.on_line = [&](const std::string& line) { session.send_line(line); },
                       .on_end_of_input = [&] { io.stop(); },
                       .on_interrupt = [&] { io.stop(); }});
  session.attach_terminal(terminal.get());
  // Off a terminal: the lines a script pipes in.
  std::shared_ptr<StdinLines> script = terminal ? nullptr : StdinLines::start(STDIN_FILENO);
  session.read_stdin(script);
  spdlog::info("attached to the debug console of job {} at {} (Ctrl-C or Ctrl-D leaves it; the job goes on)",
               target.job_id, master.where());
  if (target.gdb_rank >= 0) session.send_line(fmt::format(":attach {} --gdb", target.gdb_rank));

  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) io.stop();
  });
  session.poll();
  io.run();
  if (script) script->stop();
  if (terminal) terminal->close();
  switch (session.outcome()) {
    case RemoteConsoleSession::Outcome::Left: return 0;
    case RemoteConsoleSession::Outcome::Ended:
      spdlog::info("the job's master no longer answers ({}): the job has ended", session.why());
      return 0;
    case RemoteConsoleSession::Outcome::Refused:
      spdlog::error("the debug console at {} is closed to this client: {} (the job itself may still run: `ddplaunch "
                    "status` tells)",
                    master.where(), session.why());
      return 1;
  }
  return 0;
}

}  // namespace ddplaunch
