// A worker's debugger: its prompt found on stdout, its output relayed, its keyboard written.
#include "supervise/debugger_watch.h"

#include <algorithm>
#include <iterator>

#include <boost/asio/write.hpp>

#include "debug/pdb_text.h"
#include "supervise/debugger_process.h"

namespace ddplaunch {

namespace {
// How far before pdb's place lines the shim's post-mortem mark may be: the traceback, written on
// stderr just before the mark (on stdout), can be read after it and land in between.
constexpr int kLinesBetweenMarkAndPlace = 64;

// Where the debugger stopped: the location and code lines pdb printed just before its first
// prompt; a post-mortem stop also names the exception (the shim's mark before pdb's place
// lines, other-stream lines possibly in between; an earlier stop's place line ends the search).
std::pair<debug::StopLocation, std::string> stop_of(const Worker& worker) {
  debug::StopLocation where;
  std::string reason;
  int searched = 0;
  for (auto line = worker.tail.rbegin(); line != worker.tail.rend(); ++line) {
    if (where.file.empty()) {
      if (auto code = debug::parse_pdb_code_line(*line); code && where.code.empty()) where.code = *code;
      if (auto found = debug::parse_pdb_location(*line)) {
        found->code = where.code;
        where = *found;
      }
      continue;
    }
    if (line->rfind(contract::kPostMortemMark, 0) == 0) {
      reason = "raised " + line->substr(std::string_view(contract::kPostMortemMark).size());
      break;
    }
    if (debug::parse_pdb_location(*line) || ++searched > kLinesBetweenMarkAndPlace) break;
  }
  return {where, reason};
}

// The lines before a post-mortem session: without the shim's mark and pdb's place lines after
// it (a traceback line that was read after the mark, from the other stream, is kept).
std::deque<std::string> lines_before_post_mortem(const std::deque<std::string>& tail) {
  auto mark = std::find_if(tail.rbegin(), tail.rend(),
                           [](const std::string& line) { return line.rfind(contract::kPostMortemMark, 0) == 0; });
  if (mark == tail.rend()) return tail;
  const auto first_after = mark.base();
  std::deque<std::string> kept(tail.begin(), std::prev(first_after));
  for (auto line = first_after; line != tail.end(); ++line)
    if (!debug::parse_pdb_location(*line) && !debug::parse_pdb_code_line(*line)) kept.push_back(*line);
  return kept;
}
}  // namespace

// The debugger's prompt is the last thing the worker wrote, unterminated: it waits for a line.
void DebuggerWatch::notice_prompt(Worker& worker) {
  const auto prompt = debug::debugger_prompt(worker.stdout_lines.unterminated());
  if (prompt) worker.stdout_lines.drop_unterminated();
  const bool owed = prompt && worker.prompts_owed > 0;
  if (owed) --worker.prompts_owed;
  if (owed && !worker.debugging) return;  // the answer to a command typed before `c`: the rank runs on
  if (prompt && !worker.debugging && worker.stdin_pipe.is_open()) {
    const auto [where, reason] = stop_of(worker);
    worker.debugging = true;
    worker.debugger_pid = process_in_debugger(worker.pid, worker.stdin_pipe.native_handle());
    if (!reason.empty()) worker.tail_before_post_mortem = lines_before_post_mortem(worker.tail);
    worker.debugger_output.clear();
    worker.held_lines.clear();  // pdb's own location lines: the console names the place
    worker.held_lines_timer.cancel();
    if (callbacks_.on_debugger_stopped) callbacks_.on_debugger_stopped(worker, where, reason);
    callbacks_.phases_changed();
    return;
  }
  if (!worker.debugging || (!prompt && worker.debugger_output.empty())) return;
  std::string lines;
  lines.swap(worker.debugger_output);
  if (callbacks_.on_debugger_output) callbacks_.on_debugger_output(worker, lines, prompt.has_value());
}

void DebuggerWatch::leave(Worker& worker) {
  if (!worker.debugging) return;
  worker.debugging = false;
  if (!worker.debugger_output.empty()) {  // its last words in the debugger, then it ran on
    std::string lines;
    lines.swap(worker.debugger_output);
    if (callbacks_.on_debugger_output) callbacks_.on_debugger_output(worker, lines, false);
  }
  if (callbacks_.on_debugger_left) callbacks_.on_debugger_left(worker);
  callbacks_.phases_changed();
}

bool DebuggerWatch::input(const std::shared_ptr<Worker>& worker, const std::string& line) {
  Worker& w = *worker;
  if (!w.debugging || !type_line(worker, line)) return false;
  if (debug::classify_debugger_command(line) != debug::DebuggerCommand::Other) leave(w);
  else ++w.prompts_owed;
  return true;
}

bool DebuggerWatch::type_line(const std::shared_ptr<Worker>& worker, const std::string& line) {
  Worker& w = *worker;
  if (!w.stdin_pipe.is_open() || w.status) return false;
  if (w.stdin_queue.size() + line.size() + 1 > Worker::kMaxStdinQueue) return false;
  w.stdin_queue.append(line).append("\n");
  write_stdin(worker);
  return true;
}

void DebuggerWatch::write_stdin(const std::shared_ptr<Worker>& worker) {
  if (worker->stdin_writing || worker->stdin_queue.empty() || !worker->stdin_pipe.is_open()) return;
  worker->stdin_writing = true;
  auto text = std::make_shared<std::string>(std::move(worker->stdin_queue));
  worker->stdin_queue.clear();
  boost::asio::async_write(worker->stdin_pipe, boost::asio::buffer(*text),
                           [this, worker, text](const boost::system::error_code& ec, std::size_t) {
                             worker->stdin_writing = false;
                             if (ec) return;  // it exited, or closed its stdin: nothing reads the rest
                             write_stdin(worker);
                           });
}

}  // namespace ddplaunch
