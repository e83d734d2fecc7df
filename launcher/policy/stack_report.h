// Stacks of every rank, grouped: what the master prints and writes to --log-dir
// when a rank is suspect or hung, or on `ddplaunch stacks`. Ranks with identical stacks
// share one entry ("ranks 0-6,8-15: all_reduce ← step() at train.py:87"); the stuck ranks
// come first. Pure: text in, text out.
#pragma once

#include <string>
#include <vector>

namespace ddplaunch {

struct RankStack {
  int rank = -1;
  int node = -1;
  std::string host;
  long pid = 0;
  std::string source;  // how it was taken: "python" (faulthandler), "eu-stack", "gdb", "kernel" (/proc), "none"
  std::string text;    // normalised frames (no addresses, no thread ids), innermost first
};

// "0-6,8-15" (sorted, duplicates dropped).
std::string rank_ranges(std::vector<int> ranks);

// One line for a stack: the innermost frame, then the first frame of the program itself
// ("all_reduce ← step() at train.py:87"); "" when the text has no frames.
std::string stack_summary(const std::string& text);

// Among the ranks without progress (`silent`), the ones that are not waiting in a collective
// (all_reduce, barrier, DDP's backward, a c10d/gloo/NCCL wait): a rank that stopped on its
// own while its peers wait for it. All of `silent` when every one of them waits in one, or
// when no stack tells — unless an `earlier` round of this hang named ranks that are still
// silent and that no stack of this round shows waiting in a collective: a round cut short by
// its bound (a stack tool slow on a loaded machine) does not undo what an earlier one showed.
std::vector<int> likely_stuck(const std::vector<RankStack>& stacks, const std::vector<int>& silent,
                              const std::vector<int>& earlier = {});

// The rank a hang names as its root cause: of the `stuck` ones (likely_stuck over `quiet`), one
// past the hang deadline (`past_deadline`) if any; else the stuck one when the stacks narrowed
// the quiet ranks down; else the first past the deadline.
int hang_root_cause_rank(const std::vector<int>& stuck, const std::vector<int>& quiet,
                         const std::vector<int>& past_deadline);

// The whole report: a heading, then one entry per distinct stack (the likely stuck ranks'
// entries first), each with its rank ranges, summary and frames; then the ranks no stack
// came from.
std::string render_grouped_stacks(const std::vector<RankStack>& stacks, const std::vector<int>& silent,
                                  const std::string& heading, int world_size);

// Frames from the tools' raw output, normalised so that identical stacks compare equal
// across processes: faulthandler (thread ids dropped), eu-stack -s -m (addresses dropped,
// source lines joined to their frame).
std::string normalise_python_stack(const std::string& faulthandler_output);
std::string normalise_native_stack(const std::string& eu_stack_output);
// gdb -batch -ex "thread apply all bt": thread headers and addresses dropped, arguments kept.
std::string normalise_gdb_stack(const std::string& gdb_output);

}  // namespace ddplaunch
