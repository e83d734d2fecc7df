// A rank's own prompt: noticed on its output, shown at the console, answered on its stdin.
#include "supervise/rank_prompt_watch.h"

#include "debug/pdb_text.h"

namespace ddplaunch {

namespace {
// What Python's getpass prints on the stream it prompts on when it cannot turn echo off
// (the rank has no terminal: its keyboard is a pipe); the prompt follows at once.
constexpr std::string_view kGetpassWarning = "Warning: Password input may be echoed.";

LineSplitter& splitter_of(Worker& worker, OutputStream stream) {
  return stream == OutputStream::Stdout ? worker.stdout_lines : worker.stderr_lines;
}
}  // namespace

void RankPromptWatch::notice(const std::shared_ptr<Worker>& worker, OutputStream stream) {
  Worker& w = *worker;
  const std::string tail(splitter_of(w, stream).unterminated());
  if (w.asking_on == stream && tail != w.asked_text) withdraw(w);  // it wrote on: no longer waiting there
  // Only a rank whose keyboard is ours can be answered; a debugger's prompt is DebuggerWatch's.
  if (tail.empty() || w.debugging || !w.stdin_pipe.is_open() || w.asking_on == stream) return;
  if (debug::debugger_prompt(tail) || splitter_of(w, stream).unterminated_is_progress()) return;  // tqdm's bar
  w.prompt_timer.expires_after(Worker::kPromptQuiet);
  w.prompt_timer.async_wait([this, weak = std::weak_ptr<Worker>(worker), stream, tail](const boost::system::error_code& ec) {
    auto alive = weak.lock();
    if (ec || !alive) return;
    Worker& later = *alive;
    const LineSplitter& lines = splitter_of(later, stream);
    if (later.debugging || later.status || lines.unterminated() != tail || lines.unterminated_is_progress()) return;
    take_as_prompt(alive, stream, tail);
  });
}

void RankPromptWatch::take_as_prompt(const std::shared_ptr<Worker>& worker, OutputStream stream, const std::string& tail) {
  Worker& w = *worker;
  const bool secret = stream == OutputStream::Stderr && !w.tail.empty() && w.tail.back() == kGetpassWarning;
  w.asking_on = stream;
  w.asked_text = tail;
  if (callbacks_.on_rank_prompt) callbacks_.on_rank_prompt(w, w.prefix + w.prefix_separator + tail, secret);
}

bool RankPromptWatch::answer(const std::shared_ptr<Worker>& worker, const std::string& line) {
  Worker& w = *worker;
  if (!keyboard_.type_line(worker, line)) return false;
  if (w.asking_on) {
    // The console showed the prompt and the typed line (a secret one hidden); the rank's own
    // record of it is the prompt alone, as a line of its log and tail.
    const OutputStream stream = *w.asking_on;
    const bool to_file = stream == OutputStream::Stdout ? w.routing.stdout_to_file : w.routing.stderr_to_file;
    if (to_file) w.log.write_line(stream, w.asked_text);
    w.remember(w.asked_text);
    splitter_of(w, stream).drop_unterminated();
    w.asking_on.reset();
    w.asked_text.clear();
  }
  return true;
}

void RankPromptWatch::forget(Worker& worker) {
  worker.prompt_timer.cancel();
  withdraw(worker);
}

void RankPromptWatch::withdraw(Worker& worker) {
  if (!worker.asking_on) return;
  worker.asking_on.reset();
  worker.asked_text.clear();
  if (callbacks_.on_rank_prompt) callbacks_.on_rank_prompt(worker, "", false);
}

}  // namespace ddplaunch
