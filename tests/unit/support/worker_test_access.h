// WorkerTestAccess: a unit test sets up a worker's state as the part that owns each block
// (supervise/worker.h) would have left it, without running that part: a pid as if spawned, an
// exit as if reaped, output lines as if read from its pipes.
#pragma once

#include <string>
#include <string_view>

#include "debug/pdb_text.h"
#include "supervise/worker.h"

namespace ddplaunch {

struct WorkerTestAccess {
  static void set_pid(Worker& worker, pid_t pid) { worker.process.pid_ = pid; }
  static void set_status(Worker& worker, ExitStatus status) { worker.process.status_ = status; }
  static void set_init_failure_detail(Worker& worker, std::string detail) {
    worker.phases.init_failure_detail_ = std::move(detail);
  }
  static bool foreign_report_seen(const Worker& worker) { return worker.phases.foreign_report_seen_; }
  static void remember(Worker& worker, std::string_view line) { worker.output.remember(line); }
  static void set_stdin_writing(Worker& worker, bool writing) { worker.debugger.stdin_writing_ = writing; }
  // `text` as read from its stdout: each whole line goes to `on_line`; then, as the output
  // router does, a debugger's prompt that ends it is taken off (true when there was one).
  template <typename OnLine>
  static bool wrote_on_stdout(Worker& worker, std::string_view text, OnLine on_line) {
    LineSplitter& lines = worker.output.stdout_lines_;
    lines.feed(text, on_line);
    const bool prompted = debug::debugger_prompt(lines.unterminated()).has_value();
    if (prompted) lines.drop_unterminated();
    return prompted;
  }
};

}  // namespace ddplaunch
