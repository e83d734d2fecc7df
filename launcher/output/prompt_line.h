// The console's prompt line on the terminal: a prompt and the text being typed after it,
// kept below everything else. Every other write to the terminal (worker lines, the log)
// hides it first and draws it again after (ScopedPromptHide), so a rank's output flows above
// the prompt without breaking the line being typed. Nothing is drawn while no prompt is set.
#pragma once

#include <mutex>
#include <string>

namespace ddplaunch {

class PromptLine {
 public:
  explicit PromptLine(int fd) : fd_(fd) {}
  // Draws `rendered` (prompt, typed text, cursor moves; no newline) in place of what was
  // there; "" removes the line.
  void show(std::string rendered);
  void hide();     // erases the drawn line (nested calls: one erase)
  void restore();  // after the output a hide() made room for: draws it again
  bool shown() const;

 private:
  int fd_;
  mutable std::mutex mutex_;
  std::string rendered_;
  int hidden_depth_ = 0;
};

// The launcher's one prompt line, on stdout (where the debuggers' output goes).
PromptLine& stdout_prompt_line();

// Hides the prompt line for the lifetime of the guard (one output write).
class ScopedPromptHide {
 public:
  ScopedPromptHide() { stdout_prompt_line().hide(); }
  ~ScopedPromptHide() { stdout_prompt_line().restore(); }
  ScopedPromptHide(const ScopedPromptHide&) = delete;
  ScopedPromptHide& operator=(const ScopedPromptHide&) = delete;
};

}  // namespace ddplaunch
