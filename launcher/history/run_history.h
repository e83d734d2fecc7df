// Timeouts from history: what past runs of the same job took — the init duration
// and the largest step interval — kept per job signature in a small local file, so the next
// run's init deadline and first hang deadline can start from experience instead of formulas.
//
// File: one record per line, "v1 <signature> <unix time> <init seconds> <largest step seconds>
// [@<host>/<failures>/<slowdowns> ...]", newest last (the hosts that failed a rank or were named
// a straggler in that run; readers before them ignore what follows the step seconds); at most kMaxRecords lines are kept (older ones dropped on save), malformed
// lines are skipped, saving is atomic (temp file + rename). Nothing here is trusted blindly:
// values outside sane ranges are ignored, and a seed needs several samples.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddplaunch {

// Program fingerprint + node count + socket interface: runs that should behave alike.
std::string job_signature(const std::string& program_fingerprint, int nodes, const std::string& interface_name);

// A host that caused trouble in a run: ranks of it that failed, straggler episodes it held.
struct HostTrouble {
  std::string host;  // [A-Za-z0-9._-], at most kMaxHostBytes
  int failures = 0;
  int slowdowns = 0;
  static constexpr std::size_t kMaxHostBytes = 64;
  static constexpr std::size_t kMaxPerRun = 4;  // a line stays short; the worst hosts are kept
};

struct RunRecord {
  std::string signature;
  long long unix_time = 0;
  double init_s = -1;        // -1: not measured in that run
  double max_step_s = -1;
  std::vector<HostTrouble> troubled_hosts;
};

struct HistorySeed {
  int samples = 0;
  double init_p99_s = -1;    // -1: not enough samples
  double step_p99_s = -1;
  std::string explained;     // "history: p99 of 12 runs (~/.local/state/ddplaunch/history)"
  // The hosts that caused trouble in recent runs of any job (lemon_hosts.h), each with its
  // record as said to the person: "host h3 failed ranks in 2 ... of the last 10 runs (...)".
  std::map<std::string, std::string> troubled_hosts;
};

class RunHistory {
 public:
  static constexpr std::size_t kMaxRecords = 2000;
  static constexpr int kMinSamples = 3;

  // Reads `path`; a missing file is an empty history; an unreadable one says why in `warning`.
  static RunHistory load(const std::string& path, std::string* warning = nullptr);
  // Appends and writes back (newest kMaxRecords); "" on success, else why not.
  std::string add_and_save(const RunRecord& record);

  // p99 (nearest-rank) over this signature's last 100 runs, when at least kMinSamples.
  HistorySeed seed(const std::string& signature) const;
  const std::vector<RunRecord>& records() const { return records_; }
  const std::string& path() const { return path_; }
  // What load() could not read: why the file was not (""; a missing file is an empty history),
  // and how many of its lines were not records (garbled, too long) and were skipped.
  const std::string& unreadable() const { return unreadable_; }
  std::size_t skipped_lines() const { return skipped_lines_; }

  // $DDPLAUNCH_HISTORY, else $XDG_STATE_HOME/ddplaunch/history, else ~/.local/state/ddplaunch/history.
  static std::string default_path();

 private:
  std::string path_;
  std::vector<RunRecord> records_;
  std::string unreadable_;
  std::size_t skipped_lines_ = 0;
};

}  // namespace ddplaunch
