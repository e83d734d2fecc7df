// DebuggerWatch: a worker's debugger (pdb, or one that prompts like it) between the worker's
// pipes and the debug console. It notices the debugger's prompt at the end of the worker's
// stdout, hands what the debugger says to the console, and writes the console's lines to the
// worker's stdin pipe (bounded), until a line resumes the worker or the worker exits.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "supervise/group_spec.h"
#include "supervise/worker.h"

namespace ddplaunch {

class DebuggerWatch {
 public:
  explicit DebuggerWatch(const GroupCallbacks& callbacks) : callbacks_(callbacks) {}

  // After each stdout chunk: `prompted` when the worker's debugger prompted (its prompt,
  // debug/pdb_text.h, ended the chunk and was taken off its stdout). The first prompt is a
  // stop (true is returned: pdb's place lines held back are the stop's), later ones end the
  // answer to a command.
  bool notice_prompt(Worker& worker, bool prompted);
  // A line of the worker's stdout: the debugger's while it is stopped in one (kept for the
  // console; true), else the program's (false).
  bool take_output_line(Worker& worker, std::string_view line);
  // The worker exited: the console hears its debugger's last words, its keyboard closes.
  void exited(Worker& worker);
  // The worker's keyboard: the write end of its stdin pipe.
  void connect_keyboard(Worker& worker, int stdin_fd);
  // A person's gdb took the worker (`:attach R --gdb`) or let it go.
  void set_gdb_attached(Worker& worker, bool attached);
  // A line for the debugger of a worker stopped in one; false when it is not stopped, or
  // its keyboard is full or closed.
  bool input(const std::shared_ptr<Worker>& worker, const std::string& line);
  // Writes a line to the worker's keyboard (its stdin pipe), whatever reads it: its debugger,
  // or the rank's own input(). False when the pipe is closed, the worker exited or the queue
  // is full.
  bool type_line(const std::shared_ptr<Worker>& worker, const std::string& line);

 private:
  void leave(Worker& worker);  // it runs on (a resuming line) or exited
  void write_stdin(const std::shared_ptr<Worker>& worker);

  const GroupCallbacks& callbacks_;
};

}  // namespace ddplaunch
