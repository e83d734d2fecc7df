// `ddplaunch status`: the job's phase, deadlines in force, every node and every rank, as
// plain text tables rendered from the policy's state on the master.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "policy/job_policy.h"

namespace ddplaunch {

// `suspect`: ranks the hang watch found without progress past the suspect deadline.
std::string render_status_table(const std::string& job_id, const JobPolicy& policy,
                                const std::map<int, std::string>& host_by_node, const std::vector<int>& suspect = {});

// The query `ddplaunch status --json` sends the master.
inline constexpr const char* kStatusJsonQuery = "status json";
// `ddplaunch timeline`: the running job's timeline as trace JSON (or "error: ..." when larger
// than one answer may be).
inline constexpr const char* kTimelineJsonQuery = "timeline json";
inline constexpr std::size_t kMaxTimelineReplyBytes = 900 * 1024;

// The same for scripts (`ddplaunch status --json`): one JSON object; times in seconds, a rank's
// progress_age_s null before its first progress.
std::string render_status_json(const std::string& job_id, const JobPolicy& policy,
                               const std::map<int, std::string>& host_by_node, const std::vector<int>& suspect,
                               double learnt_step_interval_s);

// While nodes are still joining: which have joined, and how many are missing.
std::string render_joining_table(const std::string& job_id, int expected_nodes,
                                 const std::vector<rendezvous::NodeRecord>& joined);

}  // namespace ddplaunch
