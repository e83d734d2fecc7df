// The job's timeline as Chrome Trace Event JSON (the format Perfetto and chrome://tracing open
// offline): process = node (pid node rank + 1; pid 0 is the job's own lane of generations and
// orders), thread = rank (tid global rank + 1; tid 0 is the node's own lane), one complete
// slice ("X") per state a lane was in, instants ("i") for exits, failures and orders, flows
// ("s" → "f") from a failure to the restart or stop it caused, metadata naming the nodes and
// their hosts. Times are microseconds since the first event recorded.
#pragma once

#include <cstdint>
#include <string>

#include "timeline/job_timeline.h"

namespace ddplaunch::timeline {

struct TraceFacts {
  std::string job_id;
  std::int64_t now_us = 0;  // the master's clock now: slices still open end here
};

std::string trace_json(const JobTimeline& timeline, const TraceFacts& facts);

}  // namespace ddplaunch::timeline
