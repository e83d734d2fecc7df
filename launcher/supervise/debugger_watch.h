// DebuggerWatch: a worker's debugger (pdb, or one that prompts like it) between the worker's
// pipes and the debug console. It notices the debugger's prompt at the end of the worker's
// stdout, hands what the debugger says to the console, and writes the console's lines to the
// worker's stdin pipe (bounded), until a line resumes the worker or the worker exits.
#pragma once

#include <memory>
#include <string>

#include "supervise/group_spec.h"
#include "supervise/worker.h"

namespace ddplaunch {

class DebuggerWatch {
 public:
  explicit DebuggerWatch(const GroupCallbacks& callbacks) : callbacks_(callbacks) {}

  // After each stdout chunk: did the worker's debugger prompt (debug/pdb_text.h)? The first
  // prompt is a stop, later ones end the answer to a command.
  void notice_prompt(Worker& worker);
  // The worker runs on (a resuming line) or exited: the console hears its last words.
  void leave(Worker& worker);
  // A line for the debugger of a worker stopped in one; false when it is not stopped, or
  // its keyboard is full or closed.
  bool input(const std::shared_ptr<Worker>& worker, const std::string& line);
  // Writes a line to the worker's keyboard (its stdin pipe), whatever reads it: its debugger,
  // or the rank's own input(). False when the pipe is closed, the worker exited or the queue
  // is full.
  bool type_line(const std::shared_ptr<Worker>& worker, const std::string& line);

 private:
  void write_stdin(const std::shared_ptr<Worker>& worker);

  const GroupCallbacks& callbacks_;
};

}  // namespace ddplaunch
