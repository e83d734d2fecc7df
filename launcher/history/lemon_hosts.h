// Lemon hosts: a host that keeps causing trouble across runs. From the run history's records,
// the hosts that failed a rank or held the job back as a straggler in at least `min_runs` of
// the last `last_runs` runs (of any job kept in this history): at a job's start they are named
// with their record, and with spares one of them is the spare kept in reserve rather than a
// member. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "history/run_history.h"

namespace ddplaunch {

struct LemonHost {
  std::string host;
  int runs_failed = 0;   // runs in which a rank of it failed
  int runs_slow = 0;     // runs in which it was named a straggler
  int runs_troubled = 0; // runs with either (a run counts once)
  int runs_considered = 0;
  long long last_trouble_unix = 0;
};

struct LemonRule {
  std::size_t last_runs = 10;
  int min_runs = 2;
};

// Worst first (most troubled runs, then the most recent trouble).
std::vector<LemonHost> lemon_hosts(const std::vector<RunRecord>& records, LemonRule rule = {});

// For the person at the start of a job and in `ddplaunch doctor`: "host h3 failed ranks in 2
// and was a straggler in 1 of the last 10 runs (last on 2026-12-07 14:02 UTC)".
std::string lemon_host_line(const LemonHost& lemon);

// `ddplaunch doctor`'s lines (each ended by a newline) on a loaded history: its lemon hosts
// with their record, or that there are none in its last runs, or that it holds no run yet, or
// why it could not be read; and how many of its lines were skipped as garbled. Advice only:
// nothing here fails the doctor.
std::string lemon_hosts_section(const RunHistory& history, LemonRule rule = {});

}  // namespace ddplaunch
