// WorkerOutputRouter: each worker's stdout and stderr, read from its pipes a chunk at a time
// and split into lines. A line goes where the worker's routing says (the terminal through the
// RankLinePrinter, its rank log), to the console while the worker is in its debugger, to
// `ddplaunch tail` followers, and into the worker's tail for failure reports.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "supervise/debugger_watch.h"
#include "supervise/group_spec.h"
#include "supervise/rank_line_printer.h"
#include "supervise/rank_prompt_watch.h"
#include "supervise/worker.h"

namespace ddplaunch {

class WorkerOutputRouter {
 public:
  // `on_output_ended`: both pipes of a worker that was already reaped reached their end.
  WorkerOutputRouter(boost::asio::io_context& io, const GroupCallbacks& callbacks, const NodeAssignment& assignment,
                     DebuggerWatch& debuggers, RankPromptWatch& prompts, std::function<void(Worker&)> on_output_ended);

  void start(const GroupSpec& spec);  // a new generation's routing and terminal
  // Where the worker's streams go, with this --ranks-filter (the console's `:ranks` changes it).
  void route(Worker& worker, const std::vector<int>& ranks_filter) const;
  // The rank's log file in `log_dir` (when its routing writes one); "" or why it could not be opened.
  std::string open_log(Worker& worker, const std::string& log_dir, const std::string& hostname) const;
  // Both pipes (the read ends of its stdout and stderr), read until their end.
  void read(const std::shared_ptr<Worker>& worker, int stdout_fd, int stderr_fd);
  // The rank's own prompt was answered at the console: the prompt alone (not the typed line)
  // becomes a line of its output, in its log and tail.
  void keep_answered_prompt(Worker& worker, OutputStream stream, const std::string& prompt);
  // Ends the reading of a reaped worker whose pipes a descendant still holds open.
  void close_pipes(Worker& worker);
  void follow_ranks(std::set<int> ranks) { followed_ = std::move(ranks); }
  void flush() { printer_.flush(); }
  void flush_through(int global_rank) { printer_.flush_through(global_rank); }
  void close() { printer_.close(); }

 private:
  void read_pipe(const std::shared_ptr<Worker>& worker, bool is_stdout);
  void on_line(Worker& worker, OutputStream stream, std::string_view line);
  void print_held_lines(Worker& worker);  // pdb-like lines held back: they were the program's
  void notice_debugger_prompt(Worker& worker);  // after a stdout chunk

  const GroupCallbacks& callbacks_;
  const NodeAssignment& assignment_;
  DebuggerWatch& debuggers_;
  RankPromptWatch& prompts_;
  std::function<void(Worker&)> on_output_ended_;
  // What decides a worker's routing besides --ranks-filter.
  StreamSpec redirects_, tee_;
  bool log_files_ = false;
  std::vector<int> local_ranks_filter_;
  std::set<int> followed_;  // global ranks someone follows with `ddplaunch tail`
  RankLinePrinter printer_;  // the ranks' lines on the terminal
};

}  // namespace ddplaunch
