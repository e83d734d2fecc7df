// Where the job's timeline is written, and the writing: the trace JSON and its HTML page
// beside it (--trace FILE), and timeline.json / timeline.html in the --log-dir.
#pragma once

#include <string>

namespace ddplaunch {

struct TimelinePaths {
  std::string json;  // Chrome Trace Event JSON
  std::string page;  // the self-contained HTML page
};

// --trace FILE: FILE itself, and the page beside it (a ".json" ending becomes ".html",
// otherwise ".html" is added).
TimelinePaths timeline_paths_for(const std::string& trace_file);

// Both files from the trace JSON, each written beside its path and renamed into place: a
// symlink, FIFO or anything but a regular file at a path is refused, never followed or
// opened. "" when written, else what failed, for the person.
std::string write_timeline(const TimelinePaths& paths, const std::string& trace_json);
// Any file the master writes at the job's end (--report): `text` as the whole of `path`, by the
// same rules (a new file beside it renamed over it; never a symlink followed, nothing but a
// regular file replaced). "" or what failed, for the person.
std::string write_whole_file(const std::string& path, const std::string& text);
// timeline.json and timeline.html in the --log-dir, through the directory opened once.
std::string write_timeline_to_log_dir(const std::string& log_dir, const std::string& trace_json);

inline constexpr const char* kLogDirTraceName = "timeline.json";
inline constexpr const char* kLogDirPageName = "timeline.html";

}  // namespace ddplaunch
