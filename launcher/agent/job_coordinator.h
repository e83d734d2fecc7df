// JobCoordinator: the master's shell around the JobPolicy. It turns rendezvous events and
// node messages into policy events, and carries out the policy's decisions: logs, timers
// (restart backoff, the group's init deadline, a periodic sweep), the worker-port check,
// and broadcasts. It decides nothing itself.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/fenced_decisions.h"
#include "agent/job_channel.h"
#include "agent/launcher_messages.h"
#include "agent/rank_tail_relay.h"
#include "agent/stack_rounds.h"
#include "agent/status_table.h"
#include "config/launch_config.h"
#include "ddplaunch/rendezvous/server.h"
#include "history/run_history.h"
#include "policy/hang_watch.h"
#include "policy/job_policy.h"
#include "policy/stack_report.h"
#include "timeline/job_timeline.h"

namespace ddplaunch {

struct CoordinatorSettings {
  LaunchConfig config;
  std::string worker_master_addr;   // the rendezvous host as resolved; every node reached it
  bool master_is_loopback = false;
  std::string worker_bind_address;  // where the port check binds on the master
  bool doctor = false;              // checks only: collect node reports, start no worker
  // The job signature of the run history: this program, on this many nodes, over
  // this interface.
  std::string program_fingerprint;
  std::string socket_ifname;
  // etcd: the coordinator moves between launchers. MASTER_ADDR is then slot 0's
  // address (not the coordinator's), the policy's state goes to `save_state` after each
  // decision (`confirmed`, when given, runs once etcd proved this launcher still leads), and a
  // newly elected coordinator starts from `restored_state` (nullopt: a new job).
  bool elected = false;
  std::function<void(std::string state, std::function<void()> confirmed)> save_state;
  std::optional<std::string> restored_state;
  std::string run_nonce;  // etcd: the run's own id, carried by every assignment
};

// Run history (job_coordinator_hang.cpp): what past runs of this job (same
// program, node count, interface) needed raises the init deadline and seeds the step interval.
// Read once per start: the file holds up to RunHistory::kMaxRecords lines.
HistorySeed load_history_seed(const CoordinatorSettings& settings);
void apply_history_seed(const HistorySeed& seed, PolicySettings& policy);
HangSettings hang_settings(const CoordinatorSettings& settings, const HistorySeed& seed);

class JobCoordinator {
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
  rendezvous::JobPlan plan(std::uint64_t generation, const std::vector<rendezvous::NodeRecord>& nodes);
  void on_message(int node_rank, const rendezvous::Message& message);
  void on_node_lost(const rendezvous::NodeRecord& node, const std::string& why);
  void on_member_joined(const rendezvous::NodeRecord& node);  // membership mode
  void on_join_timeout(const rendezvous::JoinTimeout& timeout);
  void on_foreign_store_client(const std::string& peer);  // a c10d TCPStore client on the rendezvous port
  std::string status_text() const;
  // `ddplaunch stacks`: "stacks" starts a collection and answers "pending <id>";
  // "stacks <id>" answers "pending <id>", or "done" and the grouped stacks.
  std::string answer_query(const std::string& query);
  // `ddplaunch tail` clients have lines to read still (the master's end waits briefly for them).
  bool tails_unread() const { return tails_.unread(RankTailRelay::Clock::now()); }
  // The debug console: a person quit `rank`'s debugger (and confirmed) — the job ends.
  void on_debugger_quit(long generation, int rank);
  // The node is finishing (whatever ended it: a signal, a lost master, the job's end): no
  // timer of the job's (sweep, backoff, init deadline, stack rounds) keeps the loop alive.
  void close();

 private:
  using Handler = void (JobCoordinator::*)(int node_rank, const rendezvous::Message& message);
  static const std::map<messages::Kind, Handler>& handlers();
  void on_worker_failed(int node_rank, const rendezvous::Message& message);
  void on_node_finished(int node_rank, const rendezvous::Message& message);
  void on_node_problem(int node_rank, const rendezvous::Message& message);
  void on_rank_states(int node_rank, const rendezvous::Message& message);
  void on_node_report(int node_rank, const rendezvous::Message& message);
  void on_probe_results(int node_rank, const rendezvous::Message& message);
  void on_timeline_events(int node_rank, const rendezvous::Message& message);
  void on_rank_output(int node_rank, const rendezvous::Message& message);
  std::string answer_tail(const TailRequest& request);
  // The job's timeline (job_coordinator_timeline.cpp): the master's own events, and the
  // files at the job's end (--trace, --log-dir).
  void record_instant(int node, std::string name, std::string category, std::string detail);
  void record_decisions(const JobPolicy::Decisions& decisions);
  void write_timeline_files();
  std::string timeline_json() const;

  // Fence::AlreadyConfirmed: decisions made while planning, which follows a generation start
  // etcd confirmed already: carried out at once.
  enum class Fence { AsDecided, AlreadyConfirmed };
  void carry_out(const JobPolicy::Decisions& decisions, Fence fence = Fence::AsDecided);
  void carry_out_each(const JobPolicy::Decisions& decisions);
  Result<rendezvous::JobPlan> plan_generation(const decision::PlanGeneration& chosen,
                                              const std::vector<rendezvous::NodeRecord>& nodes);
  void schedule_sweep();

  // Hangs and stacks (job_coordinator_hang.cpp).
  void on_rank_stacks(int node_rank, const rendezvous::Message& message);
  using StacksDone = StackRounds::Done;
  long request_stacks(std::string heading, std::vector<int> silent, StacksDone done);
  void check_hangs(PolicyClock::time_point now);
  void start_hang_watch(long generation, int world);
  void finish_hang_watch();  // the job ended: pending stack rounds end, the history is written
  std::string hang_status_text() const;
  // etcd: the largest step interval the hang watch learnt goes into the policy's state (and
  // that state to etcd when it grew by a tenth); a coordinator that takes over seeds its own
  // hang watch with the one it finds there. note_…: copies it into the policy when it exceeds
  // the policy's copy × `growth`; true when it did.
  void note_learnt_step_interval();
  void save_learnt_step_interval();
  void seed_hang_watch_from_state();

  boost::asio::io_context& io_;
  CoordinatorSettings settings_;
  HistorySeed history_seed_;  // before policy_ and hang_: both start from it
  JobPolicy policy_;
  std::unique_ptr<ServerJobChannel> server_channel_;
  JobChannel* server_ = nullptr;
  boost::asio::steady_timer backoff_timer_, deadline_timer_, sweep_timer_;
  std::map<int, ReportingNode> reporting_nodes_;  // from rank states, for the status table
  StatusExtras status_extras() const;
  bool sweeping_ = false;                    // the sweep timer is armed
  HangWatch hang_;
  FencedDecisions fenced_;  // etcd: decisions wait for etcd's proof of leadership, in order
  StackRounds stack_rounds_;
  std::optional<long> last_requested_round_;     // the latest round `ddplaunch stacks` started
  PolicyClock::time_point last_requested_at_{};
  bool history_recorded_ = false;
  timeline::JobTimeline timeline_;
  RankTailRelay tails_;  // `ddplaunch tail`: followed ranks' lines
};

}  // namespace ddplaunch
