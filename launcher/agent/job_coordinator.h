// JobCoordinator: the master's shell around the JobPolicy. It turns rendezvous events and
// node messages into policy events, and carries out the policy's decisions: logs, timers
// (restart backoff, the group's init deadline, a periodic sweep), the worker-port check,
// and broadcasts. It decides nothing itself.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/launcher_messages.h"
#include "config/launch_config.h"
#include "ddplaunch/rendezvous/server.h"
#include "policy/job_policy.h"

namespace ddplaunch {

struct CoordinatorSettings {
  LaunchConfig config;
  std::string worker_master_addr;   // the rendezvous host as resolved; every node reached it
  bool master_is_loopback = false;
  std::string worker_bind_address;  // where the port check binds on the master
  bool doctor = false;              // checks only: collect node reports, start no worker
};

class JobCoordinator {
 public:
  JobCoordinator(boost::asio::io_context& io, CoordinatorSettings settings);
  void attach(rendezvous::Server& server) { server_ = &server; }

  // Rendezvous server callbacks.
  rendezvous::JobPlan plan(std::uint64_t generation, const std::vector<rendezvous::NodeRecord>& nodes);
  void on_message(int node_rank, const rendezvous::Message& message);
  void on_node_lost(const rendezvous::NodeRecord& node, const std::string& why);
  void on_member_joined(const rendezvous::NodeRecord& node);  // membership mode
  void on_join_timeout(const rendezvous::JoinTimeout& timeout);
  std::string status_text() const;

 private:
  using Handler = void (JobCoordinator::*)(int node_rank, const rendezvous::Message& message);
  static const std::map<messages::Kind, Handler>& handlers();
  void on_worker_failed(int node_rank, const rendezvous::Message& message);
  void on_node_finished(int node_rank, const rendezvous::Message& message);
  void on_node_problem(int node_rank, const rendezvous::Message& message);
  void on_rank_states(int node_rank, const rendezvous::Message& message);
  void on_node_report(int node_rank, const rendezvous::Message& message);
  void on_probe_results(int node_rank, const rendezvous::Message& message);

  void carry_out(const JobPolicy::Decisions& decisions);
  void schedule_sweep();

  boost::asio::io_context& io_;
  CoordinatorSettings settings_;
  JobPolicy policy_;
  rendezvous::Server* server_ = nullptr;
  boost::asio::steady_timer backoff_timer_, deadline_timer_, sweep_timer_;
  std::map<int, std::string> host_by_node_;  // from rank states, for the status table
  bool sweeping_ = false;                    // the sweep timer is armed
};

}  // namespace ddplaunch
