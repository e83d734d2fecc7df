// DebugRelay: the master's end of interactive debugging. The nodes relay their ranks'
// debuggers here (a stop, the debugger's output and prompts, a resume); this turns them into
// the job's one DebugConsole and gives that console its screens: the terminal that started
// the job (this node's, or a fan-out's over its control channel), and a transcript that
// `ddplaunch debug` clients on other terminals read and type into (over the authenticated
// status connection). The console's lines for a rank go back to that rank's node.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "master/console_queries.h"
#include "master/planned_ranks.h"
#include "console/console_terminal.h"
#include "ddplaunch/rendezvous/types.h"
#include "debug/debug_console.h"
#include "debug/unattended_stop.h"

namespace ddplaunch {

enum class ConsolePlace {
  Terminal,  // this ddplaunch's own stdin and stdout are a terminal
  Fanout,    // a fan-out started it: the console goes over its stdout and stdin control channel
  None,      // no terminal here: only `ddplaunch debug` from another terminal
};

// The console as remote clients read it: everything it printed (the newest part, bounded),
// with an offset that only grows, and the prompt it waits at.
class ConsoleTranscript {
 public:
  static constexpr std::size_t kMaxBytes = 256 * 1024;
  void append(std::string_view text);
  // The text after `from` (what is still kept), the new offset (`next`) and the prompt.
  InspectionReply after(std::size_t from) const;
  // The same as "OFFSET\nPROMPT-LINE\nTEXT", PROMPT-LINE "P<prompt>" or "-" when there is none
  // (earlier clients' form).
  std::string since(std::size_t from) const;
  void set_prompt(std::optional<std::string> prompt) { prompt_ = std::move(prompt); }

 private:
  std::string text_;
  std::size_t dropped_ = 0;  // bytes no longer kept, before text_
  std::optional<std::string> prompt_;
};

class DebugRelay : public ConsoleQueries {
 public:
  struct Hooks {
    std::function<void(int node, const rendezvous::Message& message)> send_to_node;
    std::function<void(const rendezvous::Message& message)> broadcast;  // to every node
    std::function<void(const debug::StoppedRank& rank)> end_job;  // the person quit `rank`'s debugger
    std::function<void()> interrupt;                               // Ctrl-C at the console: as SIGINT
  };
  // `attach_hint`: what to type on another terminal to reach this console.
  // `unattended_stop`: with no terminal here, how long a stopped rank waits for someone to
  // attach (`ddplaunch debug`) before it is continued.
  // `plan` outlives the relay.
  DebugRelay(boost::asio::io_context& io, ConsolePlace place, std::string attach_hint, const PlannedRanks& plan,
             Hooks hooks, std::chrono::milliseconds unattended_stop);
  ~DebugRelay();

  // True when `message` was a debug message (handled, or dropped when it names a rank its
  // node does not hold in that generation).
  bool on_message(int node, const rendezvous::Message& message);
  // A line typed at the fan-out's terminal (its control channel).
  void on_fanout_line(const std::string& line);
  // `ddplaunch debug`'s queries: typed (ConsoleQueries), and earlier clients' text ones,
  // "debug poll OFFSET" and "debug line TEXT".
  InspectionReply transcript_after(std::size_t from) override;
  InspectionReply take_line(std::string_view line) override;
  std::string answer_query(std::string_view query);
  bool any_stopped() const { return console_.any_stopped(); }
  void close();  // the job ends: the terminal as it was

 private:
  class Screens;
  void on_console_line(const std::string& line);  // typed at any terminal of the console
  void send_line(const debug::StoppedRank& rank, const std::string& line);
  void arm_unattended_timer();

  ConsolePlace place_;
  std::string attach_hint_;
  const PlannedRanks& plan_;
  Hooks hooks_;
  ConsoleTranscript transcript_;
  std::unique_ptr<ConsoleTerminal> terminal_;
  std::unique_ptr<Screens> screens_;
  debug::DebugConsole console_;
  Generation generation_;  // the newest generation the console has seen a debugger of
  bool hint_given_ = false;
  int forged_rank_warnings_ = 0;  // said a few times, then quietly

  // No terminal here: a stop nobody attends to (no `ddplaunch debug` client since it) is
  // continued after the bound (the rule: debug::UnattendedStop).
  boost::asio::steady_timer unattended_timer_;
  debug::UnattendedStop unattended_;
};

}  // namespace ddplaunch
