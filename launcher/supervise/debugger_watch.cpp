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
  for (auto line = worker.output.tail().rbegin(); line != worker.output.tail().rend(); ++line) {
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
bool DebuggerWatch::notice_prompt(Worker& worker, bool prompted) {
  WorkerDebugger& d = worker.debugger;
  const bool owed = prompted && d.prompts_owed_ > 0;
  if (owed) --d.prompts_owed_;
  if (owed && !d.debugging_) return false;  // the answer to a command typed before `c`: the rank runs on
  if (prompted && !d.debugging_ && d.stdin_pipe_.is_open()) {
    const auto [where, reason] = stop_of(worker);
    d.debugging_ = true;
    d.pid_ = process_in_debugger(worker.process.pid(), d.stdin_pipe_.native_handle());
    if (!reason.empty()) d.tail_before_post_mortem_ = lines_before_post_mortem(worker.output.tail());
    d.output_.clear();
    if (callbacks_.on_debugger_stopped) callbacks_.on_debugger_stopped(worker, where, reason);
    callbacks_.phases_changed();
    return true;
  }
  if (!d.debugging_ || (!prompted && d.output_.empty())) return false;
  std::string lines;
  lines.swap(d.output_);
  if (callbacks_.on_debugger_output) callbacks_.on_debugger_output(worker, lines, prompted);
  return false;
}

bool DebuggerWatch::take_output_line(Worker& worker, std::string_view line) {
  WorkerDebugger& d = worker.debugger;
  if (!d.debugging_ || d.output_.size() >= Worker::kMaxStdinQueue) return false;
  d.output_.append(without_progress_mark(line)).append("\n");
  return true;
}

void DebuggerWatch::leave(Worker& worker) {
  WorkerDebugger& d = worker.debugger;
  if (!d.debugging_) return;
  d.debugging_ = false;
  if (!d.output_.empty()) {  // its last words in the debugger, then it ran on
    std::string lines;
    lines.swap(d.output_);
    if (callbacks_.on_debugger_output) callbacks_.on_debugger_output(worker, lines, false);
  }
  if (callbacks_.on_debugger_left) callbacks_.on_debugger_left(worker);
  callbacks_.phases_changed();
}

void DebuggerWatch::exited(Worker& worker) {
  leave(worker);
  boost::system::error_code ignored;
  worker.debugger.stdin_pipe_.close(ignored);
}

void DebuggerWatch::connect_keyboard(Worker& worker, int stdin_fd) { worker.debugger.stdin_pipe_.assign(stdin_fd); }

void DebuggerWatch::set_gdb_attached(Worker& worker, bool attached) { worker.debugger.gdb_attached_ = attached; }

bool DebuggerWatch::input(const std::shared_ptr<Worker>& worker, const std::string& line) {
  Worker& w = *worker;
  if (!w.debugger.debugging_ || !type_line(worker, line)) return false;
  if (debug::classify_debugger_command(line) != debug::DebuggerCommand::Other) leave(w);
  else ++w.debugger.prompts_owed_;
  return true;
}

bool DebuggerWatch::type_line(const std::shared_ptr<Worker>& worker, const std::string& line) {
  WorkerDebugger& d = worker->debugger;
  if (!d.stdin_pipe_.is_open() || worker->process.status()) return false;
  if (d.stdin_queue_.size() + line.size() + 1 > Worker::kMaxStdinQueue) return false;
  d.stdin_queue_.append(line).append("\n");
  write_stdin(worker);
  return true;
}

void DebuggerWatch::write_stdin(const std::shared_ptr<Worker>& worker) {
  WorkerDebugger& d = worker->debugger;
  if (d.stdin_writing_ || d.stdin_queue_.empty() || !d.stdin_pipe_.is_open()) return;
  d.stdin_writing_ = true;
  auto text = std::make_shared<std::string>(std::move(d.stdin_queue_));
  d.stdin_queue_.clear();
  boost::asio::async_write(d.stdin_pipe_, boost::asio::buffer(*text),
                           [this, worker, text](const boost::system::error_code& ec, std::size_t) {
                             worker->debugger.stdin_writing_ = false;
                             if (ec) return;  // it exited, or closed its stdin: nothing reads the rest
                             write_stdin(worker);
                           });
}

}  // namespace ddplaunch
