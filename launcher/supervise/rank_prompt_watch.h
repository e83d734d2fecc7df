// RankPromptWatch: a rank's own prompt (input("overwrite? [y/N] "), getpass, a login menu) is
// the person's, as under torchrun at a terminal. Text a rank leaves unterminated at the end
// of its stdout or stderr that stays there kPromptQuiet (and is no debugger's prompt) waits
// for a line: the console shows it and sends back what the person types, which this watch
// writes to the rank's stdin pipe. A getpass prompt (Python's fallback warns "Password input
// may be echoed" on stderr just before it) is marked secret: the console hides the typing.
#pragma once

#include <memory>
#include <string>

#include "supervise/debugger_watch.h"
#include "supervise/group_spec.h"
#include "supervise/worker.h"

namespace ddplaunch {

class RankPromptWatch {
 public:
  RankPromptWatch(const GroupCallbacks& callbacks, DebuggerWatch& keyboard) : callbacks_(callbacks), keyboard_(keyboard) {}

  // After each chunk of `stream`: a prompt the rank wrote on past is withdrawn; a new
  // unterminated tail is watched for kPromptQuiet.
  void notice(const std::shared_ptr<Worker>& worker, OutputStream stream);
  // A line the person typed for a rank that is not in its debugger: the answer to its prompt
  // (or to a plain read of stdin). False when its keyboard is closed or full. The prompt it
  // answered, if one was shown, waits no more: the caller has it kept as a line of the rank's
  // output (its log and tail), read from worker.prompt before.
  bool answer(const std::shared_ptr<Worker>& worker, const std::string& line);
  // The worker exited: its prompt waits no more.
  void forget(Worker& worker);

 private:
  void take_as_prompt(const std::shared_ptr<Worker>& worker, OutputStream stream, const std::string& tail);
  void withdraw(Worker& worker);

  const GroupCallbacks& callbacks_;
  DebuggerWatch& keyboard_;
};

}  // namespace ddplaunch
