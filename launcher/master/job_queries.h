// JobQueries: what the master answers on a status connection. The status table (and its JSON),
// the job's timeline so far, `ddplaunch tail`'s lines of followed ranks, `ddplaunch stacks`
// (the hang watch's rounds) and `ddplaunch debug`'s console (ConsoleQueries). A typed query
// (wire/inspection_messages.h) gets a typed reply that says how the job stands; the text
// queries of earlier clients get their text answers. It reads the job's state; only `tail` and
// `stacks` ask the nodes for something.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "master/console_queries.h"
#include "master/job_channel.h"
#include "master/hang_investigation.h"
#include "master/master_timeline.h"
#include "master/rank_tail_relay.h"
#include "master/status_table.h"
#include "master/straggler_reports.h"
#include "config/launch_config.h"
#include "policy/job_policy.h"
#include "wire/inspection_messages.h"

namespace ddplaunch {

class EtcdSeat;

class JobQueries {
 public:
  // `channel`: where requests to the nodes go (null before the coordinator is attached). The
  // policy, the hang watch and the timeline outlive the queries.
  JobQueries(const LaunchConfig& config, const JobPolicy& policy, HangInvestigation& hang_investigation,
             const StragglerReports& stragglers,
             const MasterTimeline& timeline, std::function<JobChannel*()> channel);

  // `ddplaunch status`: the job's table (while joining: who is here so far), membership and
  // the hang deadlines.
  std::string status_text() const;
  // Any other query: a typed one (encode_inspection_query's text: the reply's text), or an
  // earlier client's "tail …", "timeline json", "status json", "stacks [<id>]"; an unknown one
  // is answered with an error.
  std::string answer(const std::string& query);
  InspectionReply reply(const InspectionQuery& query);
  // How the job stands: its phase, and once it ended, how.
  JobStanding standing() const;
  // The debug console `ddplaunch debug` reaches (none: it is refused); it outlives its attachment.
  void attach_console(ConsoleQueries* console) { console_ = console; }
  // An etcd-coordinated job: this launcher's seat, whose line the status table ends with.
  void attach_etcd_seat(const EtcdSeat* seat) { etcd_seat_ = seat; }

  // A node's rank-state report: its host and log directory, for the tables.
  void note_reporting_node(int node_rank, ReportingNode node) { reporting_nodes_[node_rank] = std::move(node); }
  // A followed rank's lines, for `ddplaunch tail`.
  void on_rank_output(const rendezvous::Message& message);
  // `ddplaunch tail` clients have lines to read still (the master's end waits briefly for them).
  bool tails_unread() const { return tails_.unread(RankTailRelay::Clock::now()); }

 private:
  TailReply tail_reply(const TailRequest& request);
  InspectionReply timeline_reply() const;
  InspectionReply stacks_reply(long round);
  InspectionReply console_reply(const InspectionQuery& query);
  std::string tables_text() const;
  StatusExtras status_extras() const;

  std::string job_id_, token_;
  int expected_nodes_ = 0;
  const JobPolicy& policy_;
  HangInvestigation& hang_investigation_;
  const StragglerReports& stragglers_;
  const MasterTimeline& timeline_;
  std::function<JobChannel*()> channel_;
  std::map<int, ReportingNode> reporting_nodes_;  // from rank states, for the status table
  RankTailRelay tails_;                           // `ddplaunch tail`: followed ranks' lines
  ConsoleQueries* console_ = nullptr;              // `ddplaunch debug`: the job's debug console
  const EtcdSeat* etcd_seat_ = nullptr;            // etcd: who leads, for the status table
};

}  // namespace ddplaunch
