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
  worker.routing = route_streams(redirects_, tee_, log_files_, worker.local_rank,
                                 shown_by_filters(worker.local_rank, worker.global_rank, local_ranks_filter_, ranks_filter));
}

void WorkerOutputRouter::read(const std::shared_ptr<Worker>& worker) {
  read_pipe(worker, true);
  read_pipe(worker, false);
}

void WorkerOutputRouter::read_pipe(const std::shared_ptr<Worker>& worker, bool is_stdout) {
  auto& pipe = is_stdout ? worker->stdout_pipe : worker->stderr_pipe;
  char* buffer = is_stdout ? worker->stdout_buffer : worker->stderr_buffer;
  pipe.async_read_some(boost::asio::buffer(buffer, sizeof worker->stdout_buffer),
                       [this, keep = worker, is_stdout](const boost::system::error_code& ec, std::size_t n) {
                         Worker& w = *keep;
                         const OutputStream stream = is_stdout ? OutputStream::Stdout : OutputStream::Stderr;
                         auto& splitter = is_stdout ? w.stdout_lines : w.stderr_lines;
                         auto emit = [&](std::string_view line) { on_line(w, stream, line); };
                         if (!ec) {
                           splitter.feed(std::string_view(is_stdout ? w.stdout_buffer : w.stderr_buffer, n), emit);
                           if (is_stdout) debuggers_.notice_prompt(w);
                           prompts_.notice(keep, stream);
                           read_pipe(keep, is_stdout);
                           return;
                         }
                         if (ec == boost::asio::error::operation_aborted && w.open_pipes == 0) return;  // closed by us
                         splitter.finish(emit);
                         if (is_stdout) print_held_lines(w);
                         auto& pipe = is_stdout ? w.stdout_pipe : w.stderr_pipe;
                         boost::system::error_code ignored;
                         if (pipe.is_open()) pipe.close(ignored);
                         if (w.open_pipes > 0 && --w.open_pipes == 0 && w.finished()) on_output_ended_(w);
                       });
}

void WorkerOutputRouter::on_line(Worker& worker, OutputStream stream, std::string_view line) {
  const bool is_stdout = stream == OutputStream::Stdout;
  const bool to_terminal = is_stdout ? worker.routing.stdout_to_terminal : worker.routing.stderr_to_terminal;
  // pdb's location lines wait a moment for its prompt (Worker::held_lines); a rank in its
  // debugger: its stdout is the debugger's, for the console (whatever the filters say: a
  // stopped rank is always shown there).
  const bool pdb_location = is_stdout && !worker.debugging && worker.stdin_pipe.is_open() &&
                            (debug::parse_pdb_location(line) ||
                             (!worker.held_lines.empty() && debug::parse_pdb_code_line(line)));
  if (pdb_location && to_terminal && worker.held_lines.size() < 2) {
    worker.held_lines.emplace_back(line);
    worker.held_lines_timer.expires_after(Worker::kHeldLinesWait);
    worker.held_lines_timer.async_wait([this, &worker, gen = assignment_.generation](const boost::system::error_code& ec) {
      if (!ec && gen == assignment_.generation) print_held_lines(worker);
    });
  } else if (is_stdout && worker.debugging && worker.debugger_output.size() < Worker::kMaxStdinQueue) {
    worker.debugger_output.append(without_progress_mark(line)).append("\n");
  } else if (to_terminal) {
    print_held_lines(worker);
    printer_.print(worker.global_rank, worker.prefix, worker.prefix_separator, stream, line);
  }
  if (is_stdout ? worker.routing.stdout_to_file : worker.routing.stderr_to_file) worker.log.write_line(stream, line);
  if (!followed_.empty() && followed_.count(worker.global_rank) && callbacks_.on_followed_line)
    callbacks_.on_followed_line(worker.global_rank, without_progress_mark(line));
  worker.remember(line);
}

void WorkerOutputRouter::print_held_lines(Worker& worker) {
  worker.held_lines_timer.cancel();
  if (!worker.held_lines.empty()) printer_.flush();
  for (const auto& held : worker.held_lines)
    write_prefixed_line(OutputStream::Stdout, worker.prefix, held, worker.prefix_separator);
  worker.held_lines.clear();
}

void WorkerOutputRouter::close_pipes(Worker& worker) {
  auto emit_out = [&](std::string_view line) { on_line(worker, OutputStream::Stdout, line); };
  auto emit_err = [&](std::string_view line) { on_line(worker, OutputStream::Stderr, line); };
  worker.stdout_lines.finish(emit_out);
  worker.stderr_lines.finish(emit_err);
  print_held_lines(worker);
  worker.open_pipes = 0;
  boost::system::error_code ignored;
  worker.stdout_pipe.close(ignored);
  worker.stderr_pipe.close(ignored);
}

}  // namespace ddplaunch
