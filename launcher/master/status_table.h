// `ddplaunch status`: the job's phase, deadlines in force, every node and every rank, as
// plain text tables rendered from the policy's state on the master.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"
#include "policy/job_policy.h"

namespace ddplaunch {

// What each node said of itself in its last rank-state report.
struct ReportingNode {
  std::string host;
  std::string log_dir;  // "" without --log-dir
  Generation generation;  // the generation its last report was about
};

// What the tables show besides the policy's state.
struct StatusExtras {
  std::map<int, ReportingNode> nodes;  // by node rank
  std::vector<int> suspect;            // ranks the hang watch found without progress past the suspect deadline
  double learnt_step_interval_s = 0;   // the hang watch's (0: none learnt yet)
  // The straggler watch's: each rank's compute share over its window (absent: not measured
  // yet), and the rank that holds the job back now.
  std::map<int, double> compute_share;
  std::optional<int> straggler;
  // Each rank's CPU share (cores) over its node's last window, where measured, and the
  // straggler's node's signals that explain it (policy/straggler_explanation.h).
  std::map<int, double> cpu_cores;
  std::vector<std::string> straggler_signals;
  // What the job spent its time on so far (timeline/time_account.h), read from its timeline:
  // the line for a person and the JSON object for a script ("" before the timeline has any).
  std::string time_account_line;
  std::string time_account_json;
};

// A rank's whole output on its node ("-" without a log directory there).
std::string rank_log_file(const StatusExtras& extras, int node, int rank);

std::string render_status_table(const std::string& job_id, const JobPolicy& policy, const StatusExtras& extras);

// The same for scripts (`ddplaunch status --json`): one JSON object; times in seconds, a rank's
// progress_age_s null before its first progress.
std::string render_status_json(const std::string& job_id, const JobPolicy& policy, const StatusExtras& extras);

// While nodes are still joining: which have joined, and how many are missing.
std::string render_joining_table(const std::string& job_id, int expected_nodes,
                                 const std::vector<rendezvous::NodeRecord>& joined);

}  // namespace ddplaunch
