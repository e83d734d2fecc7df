// MasterTimeline: the master's record of the job's timeline. Its own events (a generation
// where it is planned, a failure where it is judged, the orders and their causes as decided),
// the nodes' batches, and the files at the job's end (--trace, --log-dir).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/launch_config.h"
#include "ddplaunch/rendezvous/types.h"
#include "policy/job_policy.h"
#include "timeline/job_timeline.h"
#include "timeline/time_account.h"

namespace ddplaunch {

class MasterTimeline {
 public:
  // `policy`: the generation an event belongs to (it outlives this timeline); `config`: the
  // job's id and where the files go.
  MasterTimeline(const JobPolicy& policy, const LaunchConfig& config);

  // A node's batch of its ranks' events (a malformed batch costs the picture those events).
  void on_node_events(int node_rank, const rendezvous::Message& batch);
  // A generation begins on `nodes` (named in the picture by their hosts).
  void begin_generation(Generation generation, const std::vector<rendezvous::NodeRecord>& nodes, int world,
                        double init_deadline_s);
  void record_failure(int node_rank, Generation generation, const FailureReport& report);
  // An instant of the master's in the current generation, on `node`'s lane (or the job's), or
  // on one rank's lane of it.
  void record_instant(int node, std::string name, std::string category, std::string detail,
                      int rank = timeline::kNodeLane);
  // A value the master measured of a rank, from now on (a counter track of its node).
  void record_counter(int node, int rank, std::string name, double value);
  // What the job does, as the timeline shows it: orders and their causes.
  void record_decisions(const JobPolicy::Decisions& decisions);

  // The job's exit status once it ended, and its root cause (what `ddplaunch status` says of the end).
  std::optional<int> exit_code() const { return timeline_.exit_code(); }
  const std::string& root_cause() const { return timeline_.root_cause(); }
  // What the job spent its time on so far (at its end: in all), read from the timeline.
  timeline::TimeAccount time_account() const;
  // The failures the master judged so far, counted by the host of their node.
  std::map<std::string, int> failures_by_host() const;
  // How many different hosts the job's nodes ran on, in any generation.
  std::size_t host_count() const;
  // The trace JSON (`ddplaunch timeline` asks for it while the job runs).
  std::string json() const;
  // At the job's end: the JSON and its page to --trace's file and into --log-dir.
  void write_files() const;

 private:
  std::string with_error(const std::string& reason) const;  // `reason`, and the failure's own error when it lacks it

  const JobPolicy& policy_;
  std::string job_id_, trace_file_, log_dir_;
  timeline::JobTimeline timeline_;
  std::string first_error_;  // the first failure's error of this generation (a Python exception's line)
};

}  // namespace ddplaunch
