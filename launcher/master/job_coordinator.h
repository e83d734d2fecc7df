// JobCoordinator: the master's shell around the JobPolicy. It turns rendezvous events and
// node messages into policy events, and carries out the policy's decisions: logs, timers
// (restart backoff, the group's init deadline, a periodic sweep), the worker-port check,
// and broadcasts. It decides nothing itself. Its parts: the timeline it records
// (MasterTimeline), the hang watch on its sweep (HangInvestigation), and the answers to status
// connections (JobQueries).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "master/coordinator_settings.h"
#include "master/fenced_decisions.h"
#include "master/job_channel.h"
#include "master/job_queries.h"
#include "wire/launcher_messages.h"
#include "master/hang_investigation.h"
#include "master/master_timeline.h"
#include "master/planned_ranks.h"
#include "master/straggler_reports.h"
#include "ddplaunch/rendezvous/generation.h"
#include "ddplaunch/rendezvous/server.h"
#include "history/run_history.h"
#include "policy/job_policy.h"

namespace ddplaunch {

class JobCoordinator : public PlannedRanks {
 public:
  // The job is over (job_end sent, or the job refused): nothing more will be decided.
  bool job_ended() const { return policy_.phase() == JobPhase::Ended; }
  JobCoordinator(boost::asio::io_context& io, CoordinatorSettings settings);
  // Where its orders go: the rendezvous server it plans for (a test: a recording channel).
  void attach(rendezvous::Server& server);
  void attach(JobChannel& channel) { server_ = &channel; }
  // etcd: after attach, a coordinator elected with the last one's state takes the job over.
  void take_over();

  // Rendezvous server callbacks.
  rendezvous::JobPlan plan(Generation generation, const std::vector<rendezvous::NodeRecord>& nodes);
  void on_message(int node_rank, const rendezvous::Message& message);
  void on_node_lost(const rendezvous::NodeRecord& node, const std::string& why);
  void on_member_joined(const rendezvous::NodeRecord& node);  // membership mode
  void on_join_timeout(const rendezvous::JoinTimeout& timeout);
  void on_foreign_store_client(const std::string& peer);  // a c10d TCPStore client on the rendezvous port
  // PlannedRanks: the debug console believes a node only for its own ranks.
  Generation current_generation() const override { return policy_.generation(); }
  bool node_holds(int node, int rank, Generation generation) const override;
  std::string node_host(int node) const override;
  // Status connections: `ddplaunch status`, `stacks`, `tail`, `timeline`.
  JobQueries& queries() { return queries_; }
  // The debug console: a person quit `rank`'s debugger (and confirmed) — the job ends.
  void on_debugger_quit(Generation generation, int rank);
  // The node is finishing (whatever ended it: a signal, a lost master, the job's end): no
  // timer of the job's (sweep, backoff, init deadline, stack rounds) keeps the loop alive.
  void close();

 private:
  // A node message's handler: one of the coordinator's own, or the part the message is for.
  using Handler = std::function<void(JobCoordinator&, int node_rank, const rendezvous::Message& message)>;
  static Handler handler_for(messages::Kind kind);  // empty: a kind the coordinator does not take
  void on_worker_failed(int node_rank, const rendezvous::Message& message);
  void on_node_finished(int node_rank, const rendezvous::Message& message);
  void on_node_problem(int node_rank, const rendezvous::Message& message);
  void on_rank_states(int node_rank, const rendezvous::Message& message);
  void on_node_report(int node_rank, const rendezvous::Message& message);
  void on_probe_results(int node_rank, const rendezvous::Message& message);

  // Fence::AlreadyConfirmed: decisions made while planning, which follows a generation start
  // etcd confirmed already: carried out at once.
  enum class Fence { AsDecided, AlreadyConfirmed };
  void carry_out(const JobPolicy::Decisions& decisions, Fence fence = Fence::AsDecided);
  void carry_out_each(const JobPolicy::Decisions& decisions);
  Result<rendezvous::JobPlan> plan_generation(const decision::PlanGeneration& chosen,
                                              const std::vector<rendezvous::NodeRecord>& nodes);
  void schedule_sweep();

  boost::asio::io_context& io_;
  CoordinatorSettings settings_;
  HistorySeed history_seed_;  // before policy_ and hang_investigation_: both start from it
  JobPolicy policy_;
  std::unique_ptr<ServerJobChannel> server_channel_;
  JobChannel* server_ = nullptr;
  boost::asio::steady_timer backoff_timer_, deadline_timer_, sweep_timer_;
  bool sweeping_ = false;   // the sweep timer is armed
  FencedDecisions fenced_;  // etcd: decisions wait for etcd's proof of leadership, in order
  MasterTimeline timeline_;
  HangInvestigation hang_investigation_;
  StragglerReports stragglers_;
  JobQueries queries_;
};

}  // namespace ddplaunch
