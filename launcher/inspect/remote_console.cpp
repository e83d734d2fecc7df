// The remote debug console client.
#include "inspect/remote_console.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "inspect/console_master_link.h"
#include "console/console_terminal.h"
#include "console/stdin_lines.h"
#include "console/typed_line.h"
#include "ddplaunch/rendezvous/printable.h"
#include "output/terminal_writer.h"
#include "output/worker_output.h"

namespace ddplaunch {

namespace {
// A read of the transcript waits at the master this long at most for something new. Short,
// because this client's one event loop waits with it (the keys typed meanwhile are taken after).
constexpr auto kReadWait = std::chrono::milliseconds(100);
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

  RemoteConsoleSession(boost::asio::io_context& io, ConsoleMasterLink& master, std::size_t offset)
      : io_(io), master_(master), offset_(offset), skip_partial_line_(offset > 0) {}

  void attach_terminal(ConsoleTerminal* terminal) { terminal_ = terminal; }
  void read_stdin(std::shared_ptr<StdinLines> lines) { stdin_ = std::move(lines); }

  void send_line(const std::string& line) {
    shown_prompt_.reset();  // the terminal took its prompt away with the line: the next poll shows it again
    const Result<InspectionReply> answer =
        master_.ask({InspectionAsk::DebugLine, -1, -1, line}, ConsoleMasterLink::Repeat::OnlyWhereNotCarriedOut);
    if (answer) {
      echoes_.sent(line);
      if (answer->text != "ok") show_note(rendezvous::printable_lines(answer->text));
      return;
    }
    switch (master_.last_failure()) {
      case ConsoleMasterLink::Failure::Unsure:
        show_note(fmt::format("the line may not have reached the console ({}): type it again if no answer follows\n",
                              answer.error));
        return;
      case ConsoleMasterLink::Failure::Refused: return end(Outcome::Refused, answer.error);
      default: return end(Outcome::Ended, answer.error);
    }
  }

  void poll() {
    if (stdin_)
      for (const StdinLine& line : stdin_->take()) {
        if (line.cut_bytes > 0) show_note(line_cut_notice(line.cut_bytes));
        send_line(line.text);
        if (ended_) return;
      }
    const Result<InspectionReply> piece = master_.ask({InspectionAsk::DebugPoll, -1, static_cast<long>(offset_), ""},
                                                      ConsoleMasterLink::Repeat::AfterAnyDrop, kReadWait);
    if (!piece)
      return end(master_.last_failure() == ConsoleMasterLink::Failure::Refused ? Outcome::Refused : Outcome::Ended,
                 piece.error);
    show(*piece);
    // The next read after what the loop has waiting (keys typed, a signal).
    boost::asio::post(io_, [this] {
      if (!ended_) poll();
    });
  }

  Outcome outcome() const { return outcome_; }
  const std::string& why() const { return why_; }

 private:
  void show(const InspectionReply& piece) {
    std::string text = echoes_.remove_from(rendezvous::printable_lines(piece.text));
    if (skip_partial_line_ && !text.empty()) {  // the first look starts inside a line: up to its end
      skip_partial_line_ = false;
      text.erase(0, std::min(text.find('\n'), text.size() - 1) + 1);
    }
    if (!text.empty()) {
      if (terminal_) terminal_->print(text);
      else terminal_write(STDOUT_FILENO, text);
    }
    offset_ = static_cast<std::size_t>(std::max(0L, piece.next));
    std::optional<std::string> prompt;
    if (piece.prompt) prompt = rendezvous::printable(*piece.prompt);
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
  ConsoleMasterLink& master_;
  ConsoleTerminal* terminal_ = nullptr;
  std::shared_ptr<StdinLines> stdin_;
  std::size_t offset_;
  bool skip_partial_line_;
  std::optional<std::string> shown_prompt_;
  OwnEchoes echoes_;
  bool ended_ = false;
  Outcome outcome_ = Outcome::Left;
  std::string why_;
};

}  // namespace

int run_remote_console(const RemoteConsoleTarget& target) {
  ConsoleMasterLink master(target);
  // The first look: is there a console, may we use it?
  const Result<InspectionReply> piece =
      master.ask({InspectionAsk::DebugPoll, -1, 0, ""}, ConsoleMasterLink::Repeat::AfterAnyDrop);
  if (!piece) {
    spdlog::error("cannot reach the debug console at {}: {}", master.where(), piece.error);
    return 1;
  }
  const auto end = static_cast<std::size_t>(std::max(0L, piece->next));
  boost::asio::io_context io;
  // From one byte before the first look's start: the partial line there is skipped whole.
  RemoteConsoleSession session(io, master, end > kFirstLook ? end - kFirstLook - 1 : 0);
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
