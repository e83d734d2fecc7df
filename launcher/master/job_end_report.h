// What the master says of a job at its end, beside its exit status: the straggler episodes,
// one line of what the job spent its time on (effective training time, ETT%), and with
// --report the same as one JSON object a script keeps; and the hosts that caused trouble, for
// the run history (its lemon-host record).
#pragma once

#include <vector>

#include "config/launch_config.h"
#include "history/run_history.h"
#include "master/master_timeline.h"
#include "master/straggler_reports.h"

namespace ddplaunch {

void report_job_end(const LaunchConfig& config, const MasterTimeline& timeline, const StragglerReports& stragglers,
                    int exit_code);

// The hosts that failed ranks (the timeline's failures) or held the job back (the straggler
// episodes) in this run, worst first, at most HostTrouble::kMaxPerRun; none when every node
// ran on one host (nothing to blame it against).
std::vector<HostTrouble> troubled_hosts(const MasterTimeline& timeline, const StragglerReports& stragglers);

}  // namespace ddplaunch
