// A rank's own prompt: noticed on its output, shown at the console, answered on its stdin.
#include "supervise/rank_prompt_watch.h"

#include "debug/pdb_text.h"

namespace ddplaunch {

namespace {
// What Python's getpass prints on the stream it prompts on when it cannot turn echo off
// (the rank has no terminal: its keyboard is a pipe); the prompt follows at once.
constexpr std::string_view kGetpassWarning = "Warning: Password input may be echoed.";

}  // namespace

void RankPromptWatch::notice(const std::shared_ptr<Worker>& worker, OutputStream stream) {
  Worker& w = *worker;
  WorkerPrompt& p = w.prompt;
  const LineSplitter& lines = w.output.lines(stream);
  const std::string tail(lines.unterminated());
  if (p.asking_on_ == stream && tail != p.asked_text_) withdraw(w);  // it wrote on: no longer waiting there
  // Only a rank whose keyboard is ours can be answered; a debugger's prompt is DebuggerWatch's.
  if (tail.empty() || w.debugger.debugging() || !w.debugger.keyboard_open() || p.asking_on_ == stream) return;
  if (debug::debugger_prompt(tail) || lines.unterminated_is_progress()) return;  // tqdm's bar
  p.timer_.expires_after(WorkerPrompt::kPromptQuiet);
  p.timer_.async_wait([this, weak = std::weak_ptr<Worker>(worker), stream, tail](const boost::system::error_code& ec) {
    auto alive = weak.lock();
    if (ec || !alive) return;
    const Worker& later = *alive;
    const LineSplitter& later_lines = later.output.lines(stream);
    if (later.debugger.debugging() || later.process.status() || later_lines.unterminated() != tail ||
        later_lines.unterminated_is_progress())
      return;
    take_as_prompt(alive, stream, tail);
  });
}

void RankPromptWatch::take_as_prompt(const std::shared_ptr<Worker>& worker, OutputStream stream, const std::string& tail) {
  Worker& w = *worker;
  const auto& output_tail = w.output.tail();
  const bool secret = stream == OutputStream::Stderr && !output_tail.empty() && output_tail.back() == kGetpassWarning;
  w.prompt.asking_on_ = stream;
  w.prompt.asked_text_ = tail;
  if (callbacks_.on_rank_prompt) callbacks_.on_rank_prompt(w, w.prefix + w.prefix_separator + tail, secret);
}

bool RankPromptWatch::answer(const std::shared_ptr<Worker>& worker, const std::string& line) {
  if (!keyboard_.type_line(worker, line)) return false;
  worker->prompt.asking_on_.reset();
  worker->prompt.asked_text_.clear();
  return true;
}

void RankPromptWatch::forget(Worker& worker) {
  worker.prompt.timer_.cancel();
  withdraw(worker);
}

void RankPromptWatch::withdraw(Worker& worker) {
  if (!worker.prompt.asking_on_) return;
  worker.prompt.asking_on_.reset();
  worker.prompt.asked_text_.clear();
  if (callbacks_.on_rank_prompt) callbacks_.on_rank_prompt(worker, "", false);
}

}  // namespace ddplaunch
