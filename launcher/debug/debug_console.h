// DebugConsole: the one console of a job's stopped ranks, on the master. Ranks stop in their
// debugger on any node; their nodes relay each stop, the debugger's output and its prompts
// here, and this console shows them to one person: it announces each stop, attaches one rank
// at a time (keystrokes go to that rank only), lists, casts a command to several, resumes
// them all, and asks once before a quit ends the job. It owns no terminal and no socket: it
// writes to a ConsoleScreen and acts through ConsoleActions, so tests drive it directly.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"
#include "debug/console_commands.h"
#include "debug/pdb_text.h"
#include "debug/rank_prompts.h"

namespace ddplaunch::debug {

using ConsoleClock = std::chrono::steady_clock;

struct StoppedRank {
  int rank = -1;
  int local_rank = -1;
  int node = -1;
  std::string host;
  int pid = 0;
  Generation generation;
  StopLocation where;
  std::string reason;  // "" for a breakpoint; "raised ValueError: bad" for a post-mortem stop
  ConsoleClock::time_point since{};
  bool held_by_gdb() const { return reason == kGdbReason; }
  bool post_mortem() const { return !reason.empty() && !held_by_gdb(); }  // its exception ends it when resumed
  static constexpr std::string_view kGdbReason = "gdb attached";
};

// Where the console writes: whole lines, and the prompt it is waiting at: nullopt when no
// rank is stopped (the terminal is the job's output only), "" while a rank's debugger is
// answering (keys typed meanwhile are kept for its next prompt).
class ConsoleScreen {
 public:
  virtual ~ConsoleScreen() = default;
  virtual void print(std::string_view lines) = 0;  // ends with '\n'
  virtual void set_prompt(std::optional<std::string> prompt) = 0;
  // While on, what is typed at the prompt is not shown (a rank's getpass); said before set_prompt.
  virtual void hide_typing(bool /*hidden*/) {}
};

struct ConsoleActions {
  std::function<void(const StoppedRank& rank, const std::string& line)> send_input;  // to its debugger
  std::function<void(const StoppedRank& rank)> end_job;  // the person confirmed quitting `rank`'s debugger
  std::function<void(int rank)> attach_gdb;  // `:attach R --gdb`, stopped or not (unset: not offered)
  // `:ranks LIST`: every node's terminal output shows only these global ranks (empty: all).
  std::function<void(const std::vector<int>& ranks)> show_ranks;
};

// Each line of `lines` (the last one with or without its '\n') after `prefix`, each ended by '\n'.
std::string prefix_each_line(std::string_view lines, std::string_view prefix);

class DebugConsole {
 public:
  DebugConsole(ConsoleScreen& screen, ConsoleActions actions) : screen_(screen), actions_(std::move(actions)) {}

  // A rank's node saw its debugger's first prompt.
  void on_stopped(StoppedRank stopped);
  // The debugger's output (`lines` are whole lines), then, when `prompt` is set, its prompt
  // again: it waits for the next command.
  void on_output(int rank, std::string_view lines, bool prompt);
  // The rank left its debugger (continued, exited, its generation ended).
  void on_resumed(int rank);
  // A rank in no debugger waits at its own prompt (prompt.shown), or no longer ("").
  void on_rank_prompt(RankPrompt prompt);
  // A new generation started: every rank of an earlier one is gone.
  void on_generation(Generation generation);
  // One line typed at the console (without its newline).
  void on_line(std::string_view line, ConsoleClock::time_point now);
  // End of input at the console (Ctrl-D): pdb's own meaning, quit, asked like `q`; at a rank's
  // own prompt it is not sent (the rank's stdin stays open: it is its debugger's keyboard).
  void on_end_of_input(ConsoleClock::time_point now);

  std::string list_text(ConsoleClock::time_point now) const;
  bool any_stopped() const { return !stopped_.empty(); }
  std::optional<int> attached() const { return attached_; }
  std::vector<int> stopped_ranks() const;

 private:
  void run_command(const ConsoleCommand& command, ConsoleClock::time_point now);
  void attach(int rank);
  void send(const StoppedRank& rank, const std::string& line);
  void resume(const StoppedRank& rank, const std::string& line);  // a line that lets it run on
  void ask_to_quit(int rank);
  std::vector<const StoppedRank*> select(const RankSelection& selection) const;
  void refresh_prompt();
  void answer_rank_prompt(std::string_view line);  // a line typed while no rank is stopped
  std::string announce(const StoppedRank& stopped) const;

  ConsoleScreen& screen_;
  ConsoleActions actions_;
  std::map<int, StoppedRank> stopped_;  // by global rank
  std::optional<int> attached_;
  RankPrompts prompts_;  // ranks waiting at their own prompt (input(), getpass)
  std::optional<int> quit_asked_for_;   // a quit waits for "y"
  bool ended_ = false;                  // the job is ending: nothing more is sent
  // The person let a post-mortem rank run on (`c`): its exception ends this generation, and
  // the stops that follow (its peers' errors at the lost connection) are not announced.
  bool ending_by_decision_ = false;
  bool awaiting_answer_ = false;        // a line went to the attached rank: its prompt comes back with the answer
  Generation generation_;
};

}  // namespace ddplaunch::debug
