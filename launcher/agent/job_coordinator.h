// JobCoordinator: the master's decisions, made once for the whole job. It plans each
// generation (worker port, MASTER_ADDR, timeout, cross-node checks), hears every node's
// failures, decides restart or stop by policy, and ends the job with one root cause.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/launcher_messages.h"
#include "config/launch_config.h"
#include "ddplaunch/rendezvous/server.h"

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

  rendezvous::JobPlan plan(std::uint64_t generation, const std::vector<rendezvous::NodeRecord>& nodes);
  void on_message(int node_rank, const rendezvous::Message& message);
  void on_node_lost(const rendezvous::NodeRecord& node, const std::string& why);
  std::string status_text() const;

 private:
  void on_failure(const messages::FailureReport& report, long generation);
  void order_restart(const messages::FailureReport& cause);
  void order_stop(int exit_code, const std::string& reason);
  void on_node_finished(int node_rank, long generation, int exit_code);
  void end_job(int exit_code);
  void on_doctor_report(int node_rank, const rendezvous::Message& message);
  std::string check_node_facts(const std::vector<rendezvous::NodeRecord>& nodes) const;

  boost::asio::io_context& io_;
  CoordinatorSettings settings_;
  rendezvous::Server* server_ = nullptr;
  boost::asio::steady_timer backoff_timer_;

  long generation_ = 0;
  int node_count_ = 0;
  int restarts_used_ = 0;
  int worker_port_ = 0;
  bool port_at_fault_ = false;
  double timeout_s_ = 0;
  std::string timeout_explained_;  // the formula with this generation's numbers
  bool decided_ = false;                     // restart or stop ordered for this generation
  std::optional<int> stop_exit_code_;
  std::optional<messages::FailureReport> first_failure_;  // of the current generation
  int failure_count_ = 0;                    // all generations
  std::set<int> finished_nodes_;
  int finished_exit_code_ = 0;
  std::vector<rendezvous::NodeRecord> nodes_;
  std::map<int, rendezvous::Message> doctor_rows_;
  std::map<int, std::string> last_error_by_node_;
  struct NodeStates {
    std::string host;
    long generation = 0;
    std::string states;  // "rank pid state" lines
    std::chrono::steady_clock::time_point received;
  };
  std::map<int, NodeStates> worker_states_;
  bool ended_ = false;
};

}  // namespace ddplaunch
