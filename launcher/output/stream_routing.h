// Where each worker stream goes: torchrun's -r/--redirects and -t/--tee ("0".."3" for every
// local rank, or "LOCAL_RANK:0..3,..."; 1 stdout, 2 stderr, 3 both), --log-dir and
// --local-ranks-filter, decided in one pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddplaunch {

// One -r or -t value, parsed once (by its option row): not given, one 0..3 for every local
// rank, or a 0..3 per listed local rank (the others 0). The bits are torchrun's Std: 1 stdout,
// 2 stderr.
struct StreamSpec {
  std::optional<int> every_rank;
  std::vector<std::pair<int, int>> per_rank;  // (local rank, 0..3), as given
  bool given() const { return every_rank.has_value() || !per_rank.empty(); }
  int streams_for(int local_rank) const;  // the Std bits for this local rank
  bool names_a_stream() const;            // some rank gets a stream (then a log directory is needed)
  bool operator==(const StreamSpec&) const = default;
};

// "" is a spec not given; nothing when `text` is not torchrun's form.
std::optional<StreamSpec> parse_stream_spec(std::string_view text);
std::string stream_spec_text(const StreamSpec& spec);  // as given ("" when not given)
std::string stream_spec_choices();                      // "torchrun's 0..3 (...) or a LOCAL_RANK:0..3 list ..."
// "" when `text` is empty or valid; else what is wrong, for the person who typed it.
std::string stream_spec_problem(std::string_view text);

struct StreamRouting {
  bool stdout_to_terminal = true;
  bool stderr_to_terminal = true;
  bool stdout_to_file = false;
  bool stderr_to_file = false;
  bool any_file() const { return stdout_to_file || stderr_to_file; }
};

// Whether the filters leave a rank's lines on the terminal: --local-ranks-filter by local
// rank, --ranks-filter (or the console's `:ranks`) by global rank; an empty filter shows all.
bool shown_by_filters(int local_rank, int global_rank, const std::vector<int>& local_ranks_filter,
                      const std::vector<int>& ranks_filter);

// Neither -r nor -t given: both streams on the terminal, and in the rank's log file when
// there is a --log-dir (ddplaunch's default). Otherwise torchrun's meaning: redirected
// streams go only to the file, teed ones to the file and the terminal, the rest only to
// the terminal. --local-ranks-filter then hides the ranks it leaves out from the terminal.
StreamRouting route_streams(const StreamSpec& redirects, const StreamSpec& tee, bool have_log_dir, int local_rank,
                            bool shown_by_filter);

// True when -r/-t ask some rank for a log file (then a log directory is needed).
bool streams_need_files(const StreamSpec& redirects, const StreamSpec& tee);

}  // namespace ddplaunch
