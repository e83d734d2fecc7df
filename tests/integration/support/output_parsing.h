// Reading ddplaunch's output in integration tests: counting a text, every node's output for a
// failure message, the workers' "ENV NAME=value" lines (fake_worker --print-env) and the example
// trainers' "FINAL rank=..." lines, each with the "[rank R] " or "[node N rank R] " prefix.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "process_runner.h"

namespace ddplaunch::testing {

// How many non-overlapping times `needle` occurs in `text`.
int count_of(const std::string& text, const std::string& needle);

// Every result's output under a "===== <label> I: exit N[ (TIMED OUT)] after S s" line.
std::string all_output(const std::vector<RunResult>& results, const std::string& label = "node");

// One "ENV NAME=value" or "ENV NAME unset" line a worker printed, as the launcher prefixed it.
struct EnvLine {
  int node = -1;  // N of "[node N rank R] "; -1 for a single-node "[rank R] " prefix
  int rank = -1;
  std::string name;
  std::optional<std::string> value;  // nullopt for "NAME unset"
};

// The ENV lines of `output` in the order printed (lines without a worker prefix are not theirs).
std::vector<EnvLine> env_lines(const std::string& output);

// One "FINAL rank=R loss_first=A loss_last=B checksum=C" line of the example trainers.
struct FinalLine {
  int prefix_node = -1;  // N of a "[node N rank P] " prefix, else -1
  int prefix_rank = -1;  // P of a "[rank P] " or "[node N rank P] " prefix, else -1
  int rank = -1;         // R as the trainer (torch) saw it
  double loss_first = 0, loss_last = 0;
  std::string checksum;
  std::string text;  // the line as matched, prefix included, for messages
};

// The FINAL lines of `output` in the order printed, prefixed or not.
std::vector<FinalLine> final_lines(const std::string& output);

// Every "<tag>=<pid>" in `output`, in order (worker lines are prefixed: searched anywhere).
std::vector<pid_t> pids_after(const std::string& output, const std::string& tag);

}  // namespace ddplaunch::testing
