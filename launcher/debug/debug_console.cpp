// The debug console's behaviour: announcements, attach/detach, cast, continue, quit.
#include "debug/debug_console.h"

#include <fmt/format.h>

namespace ddplaunch::debug {

namespace {
std::string seconds_text(ConsoleClock::duration d) {
  const long s = static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
  return s < 120 ? fmt::format("{} s", s) : fmt::format("{} min {} s", s / 60, s % 60);
}
}  // namespace

std::string prefix_each_line(std::string_view lines, std::string_view prefix) {
  std::string out;
  for (std::size_t start = 0; start < lines.size();) {
    const std::size_t end = std::min(lines.find('\n', start), lines.size());
    out += prefix;
    out.append(lines.substr(start, end - start));
    out += '\n';
    start = end + 1;
  }
  return out;
}

std::string DebugConsole::announce(const StoppedRank& s) const {
  const std::string what = s.held_by_gdb()   ? "is held by gdb (attached on its node)"
                           : s.reason.empty() ? "stopped at " + s.where.short_text()
                                              : fmt::format("{} at {} — stopped there", s.reason, s.where.short_text());
  return fmt::format("rank {} (local {}, node {}, host {}, pid {}) {}\n", s.rank, s.local_rank, s.node, s.host, s.pid,
                     what);
}

void DebugConsole::on_stopped(StoppedRank stopped) {
  // Once the person ended the job (`q`) or let a post-mortem rank's exception end it, a new
  // stop is a follow-on failure of that decision: not announced, not attached; it ends with
  // the job (or its generation).
  if (stopped.generation < generation_ || ended_ || (ending_by_decision_ && stopped.generation == generation_)) return;
  const int rank = stopped.rank;
  stopped_[rank] = std::move(stopped);
  screen_.print(announce(stopped_[rank]));
  if (!attached_ && !quit_asked_for_) {
    attach(rank);
    return;
  }
  if (attached_ != rank)
    screen_.print(fmt::format("  rank {} waits in its debugger: `:attach {}` to type to it, `:list` for every stopped "
                              "rank\n",
                              rank, rank));
  refresh_prompt();
}

void DebugConsole::on_output(int rank, std::string_view lines, bool prompt) {
  if (!lines.empty()) screen_.print(attached_ == rank ? std::string(lines) : prefix_each_line(lines, fmt::format("[rank {}] ", rank)));
  if (prompt && attached_ == rank) awaiting_answer_ = false;
  refresh_prompt();
}

void DebugConsole::on_resumed(int rank) {
  if (stopped_.erase(rank) == 0) return;
  if (attached_ == rank) {
    attached_.reset();
    awaiting_answer_ = false;
  }
  if (quit_asked_for_ == rank) quit_asked_for_.reset();
  if (!stopped_.empty() && !attached_)
    screen_.print(fmt::format("rank {} runs on; still stopped: rank(s) {} — `:attach R`\n", rank,
                              format_index_list(stopped_ranks())));
  refresh_prompt();
}

void DebugConsole::on_rank_prompt(RankPrompt prompt) {
  if (prompt.generation < generation_ || ended_) return;
  if (prompt.shown.empty()) prompts_.withdrawn(prompt.rank);
  else prompts_.asked(std::move(prompt));
  refresh_prompt();
}

void DebugConsole::on_end_of_input(ConsoleClock::time_point now) {
  if (!stopped_.empty() || quit_asked_for_ || ended_) return on_line("q", now);
  screen_.print("Ctrl-D is not passed to a rank (its stdin stays open for its debugger): type its answer, or "
                "Ctrl-C to stop the job\n");
  refresh_prompt();
}

// The line answers the latest rank prompt; said where it is not plain which rank reads it.
void DebugConsole::answer_rank_prompt(std::string_view line) {
  const RankPrompt* asking = prompts_.latest();
  if (!asking && line.empty()) return refresh_prompt();  // Enter with nothing asked: nothing to send
  StoppedRank to;
  to.rank = asking ? asking->rank : 0;
  to.node = asking ? asking->node : -1;
  to.generation = asking ? asking->generation : generation_;
  if (!asking)
    screen_.print("→ rank 0 (no rank is waiting at a prompt: a typed line goes to rank 0's stdin)\n");
  else if (prompts_.size() > 1)
    screen_.print(fmt::format("→ rank {} ({} more rank(s) wait at a prompt: each is shown in turn)\n", to.rank,
                              prompts_.size() - 1));
  prompts_.withdrawn(to.rank);
  send(to, std::string(line));
  refresh_prompt();
}

void DebugConsole::on_generation(Generation generation) {
  if (generation <= generation_) return;
  generation_ = generation;
  ending_by_decision_ = false;
  prompts_.clear();
  stopped_.clear();
  attached_.reset();
  quit_asked_for_.reset();
  awaiting_answer_ = false;
  refresh_prompt();
}

std::vector<int> DebugConsole::stopped_ranks() const {
  std::vector<int> out;
  for (const auto& [rank, s] : stopped_) out.push_back(rank);
  return out;
}

void DebugConsole::on_line(std::string_view line, ConsoleClock::time_point now) {
  if (ended_) {
    screen_.print("the job is ending on every node; nothing more is sent to the ranks\n");
    return;
  }
  if (quit_asked_for_) {
    const int rank = *quit_asked_for_;
    quit_asked_for_.reset();
    std::string_view answer = line;
    while (!answer.empty() && answer.front() == ' ') answer.remove_prefix(1);
    if (!answer.empty() && (answer.front() == 'y' || answer.front() == 'Y') && stopped_.count(rank)) {
      ended_ = true;
      screen_.print(fmt::format("ending the job on every node: rank {} quit the debugger\n", rank));
      screen_.set_prompt(std::nullopt);
      if (actions_.end_job) actions_.end_job(stopped_.at(rank));
      return;
    }
    screen_.print(fmt::format("not quitting: rank {} stays stopped\n", rank));
    refresh_prompt();
    return;
  }
  if (!attached_ && stopped_.empty() && !is_console_command(line)) return answer_rank_prompt(line);
  if (!attached_ || is_console_command(line)) {
    std::string_view rest = line;
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    if (rest.empty()) return refresh_prompt();
    run_command(parse_console_command(line), now);
    return;
  }
  const StoppedRank& rank = stopped_.at(*attached_);
  // gdb: `c` and `q` detach it (the node sees to that) and the rank runs on; the job goes on.
  if (rank.held_by_gdb() && classify_debugger_command(line) != DebuggerCommand::Other) {
    const int number = rank.rank;
    send(rank, std::string(line));
    screen_.print(fmt::format("gdb detaches from rank {}: it runs on\n", number));
    on_resumed(number);
    return;
  }
  switch (classify_debugger_command(line)) {
    case DebuggerCommand::Quit: return ask_to_quit(rank.rank);
    case DebuggerCommand::Resume: return resume(rank, std::string(line));
    case DebuggerCommand::Other:
      awaiting_answer_ = true;  // its output and next prompt follow
      send(rank, std::string(line));
      refresh_prompt();
      return;
  }
}

void DebugConsole::run_command(const ConsoleCommand& command, ConsoleClock::time_point now) {
  using Kind = ConsoleCommand::Kind;
  switch (command.kind) {
    case Kind::Invalid: screen_.print(command.error + "\n"); break;
    case Kind::Help: screen_.print(console_help_text()); break;
    case Kind::List: screen_.print(list_text(now)); break;
    case Kind::Attach:
      if (command.gdb) {  // also for a rank that is not stopped: a wedged one, a native program
        if (!actions_.attach_gdb) {
          screen_.print("gdb is not available from this console\n");
          break;
        }
        screen_.print(fmt::format("attaching gdb to rank {} on its node...\n", command.rank));
        actions_.attach_gdb(command.rank);
        break;
      }
      if (!stopped_.count(command.rank)) {
        screen_.print(fmt::format("rank {} is not stopped in a debugger{}\n", command.rank,
                                  stopped_.empty() ? " (no rank is)"
                                                   : fmt::format(" (stopped: {})", format_index_list(stopped_ranks()))));
        break;
      }
      attach(command.rank);
      return;
    case Kind::Detach:
      if (!attached_) {
        screen_.print("no rank is attached\n");
        break;
      }
      screen_.print(fmt::format("detached from rank {}: it stays stopped\n", *attached_));
      attached_.reset();
      awaiting_answer_ = false;
      break;
    case Kind::Cast: {
      const std::vector<const StoppedRank*> targets = select(command.targets);
      if (targets.empty()) {
        screen_.print(fmt::format("none of those ranks is stopped (stopped: {})\n",
                                  stopped_.empty() ? "none" : format_index_list(stopped_ranks())));
        break;
      }
      const DebuggerCommand kind = classify_debugger_command(command.debugger_input);
      if (kind == DebuggerCommand::Quit) {
        screen_.print("quitting ends the whole job: type `:quit` (it asks first)\n");
        break;
      }
      if (kind != DebuggerCommand::Resume) {
        for (const StoppedRank* target : targets) send(*target, command.debugger_input);
        break;
      }
      std::vector<StoppedRank> resumed;
      for (const StoppedRank* target : targets) resumed.push_back(*target);
      for (const StoppedRank& rank : resumed) resume(rank, command.debugger_input);
      break;
    }
    case Kind::ContinueAll: {
      if (stopped_.empty()) {
        screen_.print("no rank is stopped\n");
        break;
      }
      const std::vector<int> ranks = stopped_ranks();
      for (int rank : ranks) {
        if (stopped_.at(rank).post_mortem()) ending_by_decision_ = true;
        send(stopped_.at(rank), "c");
      }
      screen_.print(fmt::format("continued rank(s) {}\n", format_index_list(ranks)));
      stopped_.clear();
      attached_.reset();
      awaiting_answer_ = false;
      break;
    }
    case Kind::ShowRanks:
      if (!actions_.show_ranks) {
        screen_.print("the output filter cannot be changed from this console\n");
        break;
      }
      actions_.show_ranks(command.shown_ranks);
      screen_.print(command.shown_ranks.empty()
                        ? std::string("every rank's output is shown again\n")
                        : fmt::format("the terminal shows only rank(s) {} from now on, on every node (log files keep "
                                      "every rank; a rank in its debugger is still shown here, a failed one in the "
                                      "root cause; `:ranks all` shows every rank again)\n",
                                      format_index_list(command.shown_ranks)));
      break;
    case Kind::Quit:
      if (attached_) return ask_to_quit(*attached_);
      if (!stopped_.empty()) return ask_to_quit(stopped_.begin()->first);
      screen_.print("no rank is stopped: Ctrl-C stops the job\n");
      break;
  }
  refresh_prompt();
}

void DebugConsole::attach(int rank) {
  attached_ = rank;
  awaiting_answer_ = false;
  const StoppedRank& s = stopped_.at(rank);
  // The place is named; the code is a `l` away (pdb's own "-> line" is not repeated here).
  screen_.print(fmt::format("attached to rank {} ({}): its debugger's prompt below (`l` lists the code); `:help` for "
                            "the console's commands\n",
                            rank, s.held_by_gdb() ? "gdb; `c` or `q` detaches it" : s.where.short_text()));
  refresh_prompt();
}

void DebugConsole::send(const StoppedRank& rank, const std::string& line) {
  if (actions_.send_input) actions_.send_input(rank, line);
}

void DebugConsole::resume(const StoppedRank& rank, const std::string& line) {
  if (rank.post_mortem()) ending_by_decision_ = true;
  const int number = rank.rank;
  send(rank, line);
  on_resumed(number);
}

void DebugConsole::ask_to_quit(int rank) {
  quit_asked_for_ = rank;
  refresh_prompt();
}

std::vector<const StoppedRank*> DebugConsole::select(const RankSelection& selection) const {
  std::vector<const StoppedRank*> out;
  for (const auto& [rank, s] : stopped_) {
    const bool chosen = selection.all ||
                        std::binary_search(selection.ranks.begin(), selection.ranks.end(), rank) ||
                        std::binary_search(selection.nodes.begin(), selection.nodes.end(), s.node);
    if (chosen) out.push_back(&s);
  }
  return out;
}

std::string DebugConsole::list_text(ConsoleClock::time_point now) const {
  if (stopped_.empty()) return "no rank is stopped in a debugger\n";
  std::string out = fmt::format("{:<3}{:>6} {:>5} {:<16} {:>8}  {:<40} {}\n", "", "rank", "node", "host", "pid", "where",
                                "stopped for");
  for (const auto& [rank, s] : stopped_)
    out += fmt::format("{:<3}{:>6} {:>5} {:<16} {:>8}  {:<40} {}\n", attached_ == rank ? "*" : "", rank, s.node, s.host,
                       s.pid, s.where.short_text(), seconds_text(now - s.since));
  return out;
}

void DebugConsole::refresh_prompt() {
  const RankPrompt* asking = prompts_.latest();
  screen_.hide_typing(!ended_ && !quit_asked_for_ && stopped_.empty() && asking && asking->secret);
  if (ended_) return screen_.set_prompt(std::nullopt);
  if (quit_asked_for_)
    return screen_.set_prompt(
        fmt::format("end the job on every node (rank {} quit the debugger)? [y/N] ", *quit_asked_for_));
  if (attached_) {
    if (awaiting_answer_) return screen_.set_prompt(std::string());
    return screen_.set_prompt(fmt::format("rank {} ({}) ", *attached_, stopped_.at(*attached_).held_by_gdb() ? "gdb" : "Pdb"));
  }
  if (!stopped_.empty()) return screen_.set_prompt(fmt::format("(ddplaunch debug: {} stopped) ", stopped_.size()));
  screen_.set_prompt(asking ? std::optional<std::string>(asking->shown) : std::nullopt);
}

}  // namespace ddplaunch::debug
