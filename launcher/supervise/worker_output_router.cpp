// Workers' output: pipes read, lines split and routed (terminal, log, debugger console, tail).
#include "supervise/worker_output_router.h"

namespace ddplaunch {

WorkerOutputRouter::WorkerOutputRouter(boost::asio::io_context& io, const GroupCallbacks& callbacks,
                                       const NodeAssignment& assignment, DebuggerWatch& debuggers,
                                       RankPromptWatch& prompts, std::function<void(Worker&)> on_output_ended)
    : callbacks_(callbacks),
      assignment_(assignment),
      debuggers_(debuggers),
      prompts_(prompts),
      on_output_ended_(std::move(on_output_ended)),
      printer_(io) {}

void WorkerOutputRouter::start(const GroupSpec& spec) {
  printer_.start(spec.collapse_lines && spec.assignment.local_world_size > 1, spec.assignment.node_rank,
                 spec.assignment.node_count);
  redirects_ = spec.redirects;
  tee_ = spec.tee;
  log_files_ = !spec.log_dir.empty();
  local_ranks_filter_ = spec.local_ranks_filter;
}

// torchrun's --local-ranks-filter and --ranks-filter: the others still go to log files and
// failure reports.
void WorkerOutputRouter::route(Worker& worker, const std::vector<int>& ranks_filter) const {
  worker.output.routing_ = route_streams(redirects_, tee_, log_files_, worker.local_rank,
                                 shown_by_filters(worker.local_rank, worker.global_rank, local_ranks_filter_, ranks_filter));
}

std::string WorkerOutputRouter::open_log(Worker& worker, const std::string& log_dir, const std::string& hostname) const {
  if (log_dir.empty() || !worker.output.routing_.any_file()) return {};
  return worker.output.log_.open(log_dir, worker.global_rank, assignment_.generation, assignment_.node_rank, hostname);
}

void WorkerOutputRouter::read(const std::shared_ptr<Worker>& worker, int stdout_fd, int stderr_fd) {
  worker->output.stdout_pipe_.assign(stdout_fd);
  worker->output.stderr_pipe_.assign(stderr_fd);
  worker->output.open_pipes_ = 2;
  read_pipe(worker, true);
  read_pipe(worker, false);
}

void WorkerOutputRouter::keep_answered_prompt(Worker& worker, OutputStream stream, const std::string& prompt) {
  WorkerOutputState& out = worker.output;
  const bool to_file = stream == OutputStream::Stdout ? out.routing_.stdout_to_file : out.routing_.stderr_to_file;
  if (to_file) out.log_.write_line(stream, prompt);
  out.remember(prompt);
  out.splitter(stream).drop_unterminated();
}

// The debugger's prompt is the last thing the worker wrote, unterminated: it is taken off its
// stdout; at a stop, pdb's place lines held back are the stop's (the console names the place).
void WorkerOutputRouter::notice_debugger_prompt(Worker& worker) {
  LineSplitter& lines = worker.output.stdout_lines_;
  const bool prompted = debug::debugger_prompt(lines.unterminated()).has_value();
  if (prompted) lines.drop_unterminated();
  if (debuggers_.notice_prompt(worker, prompted)) {
    worker.output.held_lines_.clear();
    worker.output.held_lines_timer_.cancel();
  }
}

void WorkerOutputRouter::read_pipe(const std::shared_ptr<Worker>& worker, bool is_stdout) {
  WorkerOutputState& out = worker->output;
  auto& pipe = is_stdout ? out.stdout_pipe_ : out.stderr_pipe_;
  char* buffer = is_stdout ? out.stdout_buffer_ : out.stderr_buffer_;
  pipe.async_read_some(boost::asio::buffer(buffer, sizeof out.stdout_buffer_),
                       [this, keep = worker, is_stdout](const boost::system::error_code& ec, std::size_t n) {
                         Worker& w = *keep;
                         WorkerOutputState& out = w.output;
                         const OutputStream stream = is_stdout ? OutputStream::Stdout : OutputStream::Stderr;
                         auto& splitter = out.splitter(stream);
                         auto emit = [&](std::string_view line) { on_line(w, stream, line); };
                         if (!ec) {
                           splitter.feed(std::string_view(is_stdout ? out.stdout_buffer_ : out.stderr_buffer_, n), emit);
                           if (is_stdout) notice_debugger_prompt(w);
                           prompts_.notice(keep, stream);
                           read_pipe(keep, is_stdout);
                           return;
                         }
                         if (ec == boost::asio::error::operation_aborted && out.open_pipes_ == 0) return;  // closed by us
                         splitter.finish(emit);
                         if (is_stdout) print_held_lines(w);
                         auto& pipe = is_stdout ? out.stdout_pipe_ : out.stderr_pipe_;
                         boost::system::error_code ignored;
                         if (pipe.is_open()) pipe.close(ignored);
                         if (out.open_pipes_ > 0 && --out.open_pipes_ == 0 && w.finished()) on_output_ended_(w);
                       });
}

void WorkerOutputRouter::on_line(Worker& worker, OutputStream stream, std::string_view line) {
  WorkerOutputState& out = worker.output;
  const bool is_stdout = stream == OutputStream::Stdout;
  const bool to_terminal = is_stdout ? out.routing_.stdout_to_terminal : out.routing_.stderr_to_terminal;
  // pdb's location lines wait a moment for its prompt (held_lines_); a rank in its
  // debugger: its stdout is the debugger's, for the console (whatever the filters say: a
  // stopped rank is always shown there).
  const bool pdb_location = is_stdout && !worker.debugger.debugging() && worker.debugger.keyboard_open() &&
                            (debug::parse_pdb_location(line) ||
                             (!out.held_lines_.empty() && debug::parse_pdb_code_line(line)));
  if (pdb_location && to_terminal && out.held_lines_.size() < 2) {
    out.held_lines_.emplace_back(line);
    out.held_lines_timer_.expires_after(WorkerOutputState::kHeldLinesWait);
    out.held_lines_timer_.async_wait([this, &worker, gen = assignment_.generation](const boost::system::error_code& ec) {
      if (!ec && gen == assignment_.generation) print_held_lines(worker);
    });
  } else if (const bool for_its_debugger = is_stdout && debuggers_.take_output_line(worker, line);
             !for_its_debugger && to_terminal) {
    print_held_lines(worker);
    printer_.print(worker.global_rank, worker.prefix, worker.prefix_separator, stream, line);
  }
  if (is_stdout ? out.routing_.stdout_to_file : out.routing_.stderr_to_file) out.log_.write_line(stream, line);
  if (!followed_.empty() && followed_.count(worker.global_rank) && callbacks_.on_followed_line)
    callbacks_.on_followed_line(worker.global_rank, without_progress_mark(line));
  out.remember(line);
}

void WorkerOutputRouter::print_held_lines(Worker& worker) {
  WorkerOutputState& out = worker.output;
  out.held_lines_timer_.cancel();
  if (!out.held_lines_.empty()) printer_.flush();
  for (const auto& held : out.held_lines_)
    write_prefixed_line(OutputStream::Stdout, worker.prefix, held, worker.prefix_separator);
  out.held_lines_.clear();
}

void WorkerOutputRouter::close_pipes(Worker& worker) {
  WorkerOutputState& out = worker.output;
  auto emit_out = [&](std::string_view line) { on_line(worker, OutputStream::Stdout, line); };
  auto emit_err = [&](std::string_view line) { on_line(worker, OutputStream::Stderr, line); };
  out.stdout_lines_.finish(emit_out);
  out.stderr_lines_.finish(emit_err);
  print_held_lines(worker);
  out.open_pipes_ = 0;
  boost::system::error_code ignored;
  out.stdout_pipe_.close(ignored);
  out.stderr_pipe_.close(ignored);
}

}  // namespace ddplaunch
