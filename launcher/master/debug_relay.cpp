// The master's debug relay: node messages → console → nodes; the console's screens.
#include "master/debug_relay.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "wire/launcher_messages.h"
#include "console/typed_line.h"
#include "debug/console_relay.h"
#include "output/prompt_line.h"
#include "output/worker_output.h"
#include "output/terminal_writer.h"

namespace ddplaunch {

void ConsoleTranscript::append(std::string_view text) {
  text_.append(text);
  if (text_.size() > kMaxBytes) {
    const std::size_t cut = text_.size() - kMaxBytes;
    text_.erase(0, cut);
    dropped_ += cut;
  }
}

InspectionReply ConsoleTranscript::after(std::size_t from) const {
  const std::size_t end = dropped_ + text_.size();
  const std::size_t start = std::clamp(from, dropped_, end);
  InspectionReply reply;
  reply.kind = ReplyKind::Answer;
  reply.text = text_.substr(start - dropped_);
  reply.next = static_cast<long>(end);
  reply.prompt = prompt_;
  return reply;
}

std::string ConsoleTranscript::since(std::size_t from) const {
  const InspectionReply piece = after(from);
  return fmt::format("{}\n{}\n{}", piece.next, piece.prompt ? "P" + *piece.prompt : std::string("-"), piece.text);
}

// Every place the console shows up at once: the terminal (or the fan-out's), the transcript.
// Without a terminal of its own it writes plain lines, marked for the fan-out when there is one.
class DebugRelay::Screens : public debug::ConsoleScreen {
 public:
  Screens(ConsolePlace place, ConsoleTerminal* terminal, ConsoleTranscript& transcript)
      : place_(place), terminal_(terminal), transcript_(transcript) {}

  void print(std::string_view lines) override {
    transcript_.append(lines);
    if (terminal_) return terminal_->print(lines);
    const std::string out =
        debug::prefix_each_line(lines, place_ == ConsolePlace::Fanout ? debug::kConsoleLineMark : std::string_view());
    ScopedPromptHide below_the_prompt;
    terminal_write(STDOUT_FILENO, out);
  }

  // The fan-out's terminal takes its prompt away as Enter hands a line over (it waits for the
  // console's answer): the prompt it shows is "" until told again, even when the console's is
  // unchanged (a `:list` answered at `rank 1 (Pdb) ` leaves it as it was).
  void fanout_line_typed() {
    if (place_ == ConsolePlace::Fanout && shown_) shown_ = std::string();
  }

  void hide_typing(bool hidden) override {
    hidden_ = hidden;
    if (terminal_) terminal_->hide_typing(hidden);
  }
  bool typing_hidden() const { return hidden_; }

  void set_prompt(std::optional<std::string> prompt) override {
    transcript_.set_prompt(prompt);
    if (terminal_) return terminal_->set_prompt(std::move(prompt));
    if (place_ != ConsolePlace::Fanout || prompt == shown_) return;
    shown_ = prompt;
    terminal_write(STDOUT_FILENO, prompt ? std::string(debug::kPromptMark) + *prompt + "\n"
                                      : std::string(debug::kNoPromptMark) + "\n");
  }

 private:
  ConsolePlace place_;
  ConsoleTerminal* terminal_;
  ConsoleTranscript& transcript_;
  std::optional<std::string> shown_;
  bool hidden_ = false;  // a rank's getpass prompt is up
};

DebugRelay::DebugRelay(boost::asio::io_context& io, ConsolePlace place, std::string attach_hint,
                       const PlannedRanks& plan, Hooks hooks, std::chrono::milliseconds unattended_stop)
    : place_(place),
      attach_hint_(std::move(attach_hint)),
      plan_(plan),
      hooks_(std::move(hooks)),
      terminal_(place == ConsolePlace::Terminal
                    ? ConsoleTerminal::open(io, ConsoleInput{
                                                    .on_line = [this](const std::string& l) { on_console_line(l); },
                                                    .on_end_of_input = [this] { console_.on_end_of_input(debug::ConsoleClock::now()); },
                                                    .on_interrupt = [this] { if (hooks_.interrupt) hooks_.interrupt(); },
                                                })
                    : nullptr),
      screens_(std::make_unique<Screens>(place, terminal_.get(), transcript_)),
      console_(*screens_, debug::ConsoleActions{
                              .send_input = [this](const debug::StoppedRank& r, const std::string& l) { send_line(r, l); },
                              .end_job = [this](const debug::StoppedRank& r) { if (hooks_.end_job) hooks_.end_job(r); },
                              .attach_gdb = [this](int rank) {
                                if (hooks_.broadcast)
                                  hooks_.broadcast(messages::encode(plan_.current_generation(), messages::DebugAttachGdb{rank}));
                              },
                              .show_ranks = [this](const std::vector<int>& ranks) {
                                if (hooks_.broadcast)
                                  hooks_.broadcast(messages::encode(plan_.current_generation(), messages::OutputFilter{ranks}));
                              },
                          }),
      unattended_timer_(io),
      unattended_(unattended_stop) {
  if (place_ == ConsolePlace::Terminal && !terminal_) place_ = ConsolePlace::None;
}

DebugRelay::~DebugRelay() { close(); }

void DebugRelay::close() {
  unattended_timer_.cancel();
  if (terminal_) terminal_->close();
}

// Only where nobody can be at a terminal of ours: the fan-out's and this node's own terminal
// are a person's by definition.
void DebugRelay::arm_unattended_timer() {
  if (place_ != ConsolePlace::None) return;
  unattended_timer_.expires_after(unattended_.wait());
  unattended_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !console_.any_stopped()) return;
    if (!unattended_.nobody_came(debug::UnattendedStop::Clock::now())) return arm_unattended_timer();
    const std::string ranks = format_index_list(console_.stopped_ranks());
    screens_->print(fmt::format(
        "nobody attached to the debug console within {:g} s (no terminal started this job): rank(s) {} continue, "
        "their breakpoints skipped (unattended_stop_s / --unattended-stop-timeout changes the wait)\n",
        std::chrono::duration<double>(unattended_.wait()).count(), ranks));
    on_console_line(":continue");
  });
}

bool DebugRelay::on_message(int node, const rendezvous::Message& m) {
  const Generation generation = m.generation;
  auto kind = messages::kind_of(m);
  if (!kind || (*kind != messages::Kind::DebugStopped && *kind != messages::Kind::DebugOutput &&
                *kind != messages::Kind::DebugResumed))
    return false;
  const auto stop = messages::decode_debug_stopped(m);
  const auto output = stop ? std::nullopt : messages::decode_debug_output(m);
  const auto resumed = stop || output ? std::nullopt : messages::decode_debug_resumed(m);
  const int rank = stop ? stop->rank : output ? output->rank : resumed ? resumed->rank : -1;
  // A node speaks only for the ranks the plan gave it in that generation: never for another
  // node's rank (what a person types for a rank goes to the node the stop came from).
  if (rank < 0) return true;
  if (!plan_.node_holds(node, rank, generation)) {
    if (forged_rank_warnings_++ < 3)
      spdlog::warn("node {} ({}) sent a debugger message for rank {}, which is not one of its ranks in generation "
                   "{}: ignored",
                   node, plan_.node_host(node), rank, to_string(generation));
    return true;
  }
  if (generation > generation_) {
    generation_ = generation;
    console_.on_generation(generation);
  }
  if (stop) {
    debug::StoppedRank s;
    s.rank = stop->rank;
    s.local_rank = stop->local_rank;
    s.node = node;  // the connection says which node it is, not the payload
    s.host = plan_.node_host(node);  // and which host: the payload's is only a claim
    s.pid = stop->pid;
    s.generation = generation;
    s.where = debug::StopLocation{stop->file, stop->line, stop->function, stop->code};
    s.reason = stop->reason;
    s.since = debug::ConsoleClock::now();
    console_.on_stopped(std::move(s));
    arm_unattended_timer();
    if (place_ == ConsolePlace::None && !hint_given_) {
      hint_given_ = true;
      screens_->print(fmt::format("no terminal here to answer it: from another terminal, {}\n", attach_hint_));
    }
  } else if (output && output->asks) {
    console_.on_rank_prompt(debug::RankPrompt{output->rank, node, generation, output->lines, output->secret});
  } else if (output) {
    console_.on_output(output->rank, output->lines, output->prompt);
  } else {
    console_.on_resumed(resumed->rank);
  }
  return true;
}

void DebugRelay::on_fanout_line(const std::string& line) {
  screens_->fanout_line_typed();
  on_console_line(line);
}

void DebugRelay::on_console_line(const std::string& line) { console_.on_line(line, debug::ConsoleClock::now()); }

InspectionReply DebugRelay::transcript_after(std::size_t from) {
  unattended_.on_client(debug::UnattendedStop::Clock::now());  // a person is at `ddplaunch debug`
  return transcript_.after(from);
}

InspectionReply DebugRelay::take_line(std::string_view typed) {
  unattended_.on_client(debug::UnattendedStop::Clock::now());
  // Shown at every terminal of the console made printable: a line cannot pass for another.
  const std::string_view line = typed.substr(0, kMaxConsoleLineBytes);
  // A password typed for a rank's getpass is not shown anywhere.
  screens_->print(another_terminal_echo(screens_->typing_hidden() ? "(typed at a password prompt: not shown)" : line));
  if (line.find('\n') != std::string_view::npos)
    return refused_reply("a console line cannot hold a line break (send one line at a time); nothing was run");
  on_console_line(std::string(line));
  InspectionReply reply;
  reply.kind = ReplyKind::Answer;
  reply.text = typed.size() > line.size() ? line_cut_notice(typed.size() - line.size()) : "ok";
  return reply;
}

std::string DebugRelay::answer_query(std::string_view query) {
  constexpr std::string_view kPoll = "debug poll ", kLine = "debug line ";
  if (query.substr(0, kPoll.size()) == kPoll) {
    const std::string_view number = query.substr(kPoll.size());
    std::size_t from = 0;
    std::from_chars(number.data(), number.data() + number.size(), from);
    unattended_.on_client(debug::UnattendedStop::Clock::now());  // a person is at `ddplaunch debug`
    return transcript_.since(from);
  }
  if (query.substr(0, kLine.size()) == kLine) {
    const InspectionReply reply = take_line(query.substr(kLine.size()));
    return reply.kind == ReplyKind::Refused ? "error: " + reply.text : reply.text;
  }
  return "error: unknown debug query (expected 'debug poll N' or 'debug line TEXT')";
}

void DebugRelay::send_line(const debug::StoppedRank& rank, const std::string& line) {
  // A rank that asked nothing (node unknown): every node is told, the one that has it writes.
  if (rank.node < 0 && hooks_.broadcast)
    return hooks_.broadcast(messages::encode(plan_.current_generation(), messages::DebugInput{rank.rank, line}));
  if (hooks_.send_to_node) hooks_.send_to_node(rank.node, messages::encode(rank.generation, messages::DebugInput{rank.rank, line}));
}

}  // namespace ddplaunch
