// The job's timeline as Chrome Trace Event JSON (the format Perfetto and chrome://tracing open
// offline): process = node (pid node rank + 1; pid 0 is the job's own lane of generations and
// orders), thread = rank (tid global rank + 1; tid 0 is the node's own lane), one complete
// slice ("X") per state a lane was in, instants ("i") for exits, failures and orders, flows
// ("s" → "f") from a failure to the restart or stop it caused, metadata naming the nodes and
// their hosts. Times are microseconds since the first event recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "timeline/job_timeline.h"

namespace ddplaunch::timeline {

struct TraceFacts {
  std::string job_id;
  std::int64_t now_us = 0;  // the master's clock now: slices still open end here
};

std::string trace_json(const JobTimeline& timeline, const TraceFacts& facts);

// A trace from elsewhere (a master's answer to `ddplaunch timeline`, a timeline.json on disk)
// parsed as JSON and written again as trace_json writes it (every non-ASCII character
// escaped), so that only JSON ever reaches the page's script. nullopt unless `text` is one
// JSON object (the trace format's outer form), valid UTF-8.
std::optional<std::string> reserialized_trace(std::string_view text);

}  // namespace ddplaunch::timeline
