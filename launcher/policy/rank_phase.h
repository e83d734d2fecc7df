// The phase of one rank as its node reports it to the master (DESIGN.md "Phases of a
// worker"): setup → init → running → exited. Only shim reports move a rank into init or
// running; init_entries counts the init_begin reports (a lazily created NCCL communicator
// is init again), so the master can tell which ranks still lag behind the others.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace ddplaunch {

enum class RankPhase { Setup, Init, Running, Exited };

std::string_view rank_phase_name(RankPhase phase);  // "setup", "init", "running", "exited"
std::optional<RankPhase> rank_phase_from_name(std::string_view name);

struct RankReport {
  int rank = 0;
  pid_t pid = 0;
  RankPhase phase = RankPhase::Setup;
  int init_entries = 0;  // init_begin reports so far in this generation
  std::string state;     // for people (`ddplaunch status`): "paused", "exited:0", "killed:SIGKILL", ...
  // Training progress: steps so far, the longest step interval since the
  // node's previous report, how long ago the last progress was (-1: none yet), the open
  // section ("" when none).
  long steps = 0;
  long max_interval_ms = 0;
  long progress_age_ms = -1;
  std::string section;
  // Since the node's previous report, where the shim measures it: the wall time the rank's
  // steps covered and the part of it spent waiting inside collectives (-1: not measured). The
  // master's straggler watch reads compute = span - wait.
  long span_ms = -1;
  long wait_ms = -1;
  // The CPU the rank's process used over its node's last window, in thousandths of a core
  // (utime + stime over wall time; -1: not measured). Said beside a straggler: a rank that
  // computes but gets a sliver of a core is starved (policy/straggler_explanation.h).
  long cpu_millicores = -1;
  // Stopped in a debugger (at its prompt, or traced by gdb): a person holds it, so no
  // deadline of the job runs meanwhile (DESIGN.md "Interactive debugging").
  bool in_debugger() const { return state == kDebuggingState; }
  static constexpr std::string_view kDebuggingState = "debugging";
};

}  // namespace ddplaunch
