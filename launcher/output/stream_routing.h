// Where each worker stream goes: torchrun's -r/--redirects and -t/--tee ("0".."3" for every
// local rank, or "LOCAL_RANK:0..3,..."; 1 stdout, 2 stderr, 3 both), --log-dir and
// --local-ranks-filter, decided in one pure function.
#pragma once

#include <string>
#include <vector>
#include <string_view>

namespace ddplaunch {

struct StreamRouting {
  bool stdout_to_terminal = true;
  bool stderr_to_terminal = true;
  bool stdout_to_file = false;
  bool stderr_to_file = false;
  bool any_file() const { return stdout_to_file || stderr_to_file; }
};

// "" when `spec` is empty or valid; else what is wrong, for the person who typed it.
std::string stream_spec_problem(std::string_view spec);

// The streams `spec` names for `local_rank`, as torchrun's Std bits (1 stdout, 2 stderr);
// a rank a per-rank list leaves out gets 0.
int streams_for_rank(std::string_view spec, int local_rank);

// Neither -r nor -t given: both streams on the terminal, and in the rank's log file when
// there is a --log-dir (ddplaunch's default). Otherwise torchrun's meaning: redirected
// streams go only to the file, teed ones to the file and the terminal, the rest only to
// the terminal. --local-ranks-filter then hides the ranks it leaves out from the terminal.
// Whether the filters leave a rank's lines on the terminal: --local-ranks-filter by local
// rank, --ranks-filter (or the console's `:ranks`) by global rank; an empty filter shows all.
bool shown_by_filters(int local_rank, int global_rank, const std::vector<int>& local_ranks_filter,
                      const std::vector<int>& ranks_filter);

StreamRouting route_streams(std::string_view redirects, std::string_view tee, bool have_log_dir, int local_rank,
                            bool shown_by_filter);

// True when -r/-t ask some rank for a log file (then a log directory is needed).
bool streams_need_files(std::string_view redirects, std::string_view tee);

}  // namespace ddplaunch
