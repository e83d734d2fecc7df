// NodeAgent: the shell around one node's state machine (docs/ARCHITECTURE.md). It joins the
// rendezvous, spawns this node's workers for each generation, forwards their phases and
// failures to the master, and carries out what the node's own NodePolicy decides on the
// master's orders, its group's end, signals and a lost master (policy/node_policy.h: the
// states and every ending). On the master node its RendezvousHost hosts the rendezvous server
// and the JobCoordinator. It decides nothing about the job: the master's JobPolicy does.
//
// Its parts reach it through four narrow seams it implements: MasterLink (send to the master,
// the generation, whether there is one), NodeView (its workers and its step, read-only),
// RankKeyboard (a line into a rank's debugger) and NodeEvents (what the parts report, visited
// in one place: publish, node_agent_events.cpp).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/etcd_node_link.h"
#include "agent/join_watch.h"
#include "agent/master_link.h"
#include "agent/node_event.h"
#include "agent/node_plan.h"
#include "agent/node_view.h"
#include "agent/outer_root_cause.h"
#include "agent/paused_ranks_prompt.h"
#include "agent/peer_probe_run.h"
#include "agent/rank_debug_sessions.h"
#include "agent/rank_follower.h"
#include "agent/rank_state_reporter.h"
#include "agent/rendezvous_host.h"
#include "agent/stack_requests.h"
#include "config/launch_config.h"
#include "ddplaunch/rendezvous/client.h"
#include "ddplaunch/rendezvous/generation.h"
#include "env/worker_environment.h"
#include "placement/cpu_placement.h"
#include "policy/node_policy.h"
#include "status/status_channel.h"
#include "supervise/group_supervisor.h"
#include "supervise/orphan_guard.h"

namespace ddplaunch {

class NodeAgent final : private MasterLink, private NodeView, private NodeEvents, private RankKeyboard {
 public:
  NodeAgent(boost::asio::io_context& io, OrphanGuard& guard, NodePlan plan);
  // Starts everything; returns "" or an error (nothing to clean up then).
  std::string start();
  // A line typed at the fan-out's terminal for the debug console (its stdin control channel).
  void on_console_line(const std::string& line);
  int exit_code() const { return exit_code_; }

 private:
  // MasterLink: the node's rendezvous client, its messages stamped with the policy's generation.
  bool connected() const override { return client_ != nullptr; }
  Generation generation() const override { return policy_.generation(); }
  void send(const rendezvous::Message& message) override {
    if (client_) client_->send(message);
  }
  // NodeView: the supervisor's workers, the policy's state.
  const std::vector<std::shared_ptr<Worker>>& workers() const override { return supervisor_.workers(); }
  bool workers_active() const override { return supervisor_.active(); }
  int node_rank() const override { return node_rank_; }
  NodeState state() const override { return policy_.state(); }
  // RankKeyboard: the supervisor's.
  bool type_line(int rank, const std::string& line) override { return supervisor_.debugger_input(rank, line); }
  // NodeEvents: every part's events, one handler per kind (node_agent_events.cpp).
  void publish(const NodeEvent& event) override;

  // Transitions, one per event.
  void on_assignment(const rendezvous::Assignment& assignment);
  void on_probe_verdict(Generation generation, const std::string& ifname);
  void on_restart_order(Generation generation, const std::string& reason);
  void on_stop_order(Generation generation, const std::string& reason);
  void on_job_end(int exit_code);
  void on_group_finished(const GroupOutcome& outcome);
  void on_worker_failed(const WorkerFailure& failure);
  void resume_paused_ranks();
  void on_lost(const std::string& why, int exit_code);
  void on_standby(const std::string& reason);
  void on_dismissed(const std::string& reason);
  void on_signal(int signal);
  void carry_out(const NodePolicy::Decisions& decisions);
  void finish(int exit_code);

  // Steps the transitions share.
  void start_generation(const rendezvous::Assignment& assignment, const std::string& probe_ifname);
  void open_peer_probe();  // its endpoints go out with the join facts
  void on_master_message(const rendezvous::Message& message);
  // Node 0: one attempt to host the rendezvous, its outcome to the policy (join, retry, end).
  void try_hosting();
  void join_and_watch(int port);
  // etcd (node_agent_etcd.cpp): the coordinator is elected among the launchers (etcd_).
  std::string start_etcd();
  void retire_client();
  // `serial`: etcd's connections to coordinators, numbered (0 without etcd).
  void join_master(const std::string& host, int port, int serial = 0);
  void wait_for_signals();
  void report_problem(const std::string& message, int exit_code);
  // This node's private record of its job (job_record.h), written at the first join, kept
  // until the end.
  void record_job(const std::string& master_host, int rendezvous_port);

  boost::asio::io_context& io_;
  OrphanGuard& guard_;
  NodePlan plan_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer exit_timer_;   // bounds waiting for the master after a local stop
  boost::asio::steady_timer hosting_retry_timer_;  // node 0: the next try to host the rendezvous
  JoinWatch join_watch_;  // explains (and bounds) a master that cannot be reached
  StatusChannel status_;
  GroupSupervisor supervisor_;
  RankFollower follower_;  // `ddplaunch tail`: a followed rank's lines to the master
  RankStateReporter rank_states_;  // the rank table and its timeline events to the master
  RankDebugSessions debug_sessions_;  // this node's ranks' debuggers ↔ the master's console
  PausedRanksPrompt paused_prompt_;   // --pause-ranks: how to attach, and Enter resumes
  RendezvousHost host_;  // the master: the rendezvous server, the JobCoordinator, the debug console
  std::unique_ptr<rendezvous::Client> client_;
  rendezvous::Assignment assignment_;        // the last one that came (the policy says whether it is taken)
  std::string job_record_;                   // its folder, "" when none was written
  std::string job_master_;                   // HOST:PORT of the job's rendezvous, once joined
  std::unique_ptr<EtcdNodeLink> etcd_;  // etcd mode only: the seat and the coordinator etcd names
  PeerProbeRun peer_probe_;             // generation 0 of a multi-node job
  StackRequests stack_requests_;        // the master's requests for this node's ranks' stacks

  NodePolicy policy_;            // the node's state and its own endings
  int node_rank_ = -1;
  bool env_conflicts_reported_ = false;
  int exit_code_ = 1;
  OuterRootCause outer_root_cause_;  // for an outer agent's TORCHELASTIC_ERROR_FILE
};

}  // namespace ddplaunch
