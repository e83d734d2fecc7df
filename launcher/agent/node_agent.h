// NodeAgent: the run of one node (DESIGN.md "The run of one node"). Joins the
// rendezvous, spawns this node's workers for each generation, reports their failures to
// the master, obeys restart / stop / job-end orders, and turns signals into a clean stop.
// On the master node it also hosts the rendezvous server and the JobCoordinator.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/job_coordinator.h"
#include "config/launch_config.h"
#include "ddplaunch/rendezvous/client.h"
#include "ddplaunch/rendezvous/server.h"
#include "env/worker_environment.h"
#include "status/status_channel.h"
#include "supervise/group_supervisor.h"
#include "supervise/orphan_guard.h"

namespace ddplaunch {

struct NodePlan {                 // what main resolved before the event loop starts
  LaunchConfig config;
  std::string master_host;        // rendezvous host as given
  std::string master_ip;          // resolved
  int rendezvous_port = 0;        // 0 with --standalone: any free port
  bool host_server = false;       // this node runs the rendezvous server (node rank 0)
  int nproc = 1;
  int gpu_count = 0;
  std::string hostname;
  Environment base_env;           // launcher environment + shim additions
  rendezvous::NodeFacts facts;
  bool doctor = false;
};

class NodeAgent {
 public:
  NodeAgent(boost::asio::io_context& io, OrphanGuard& guard, NodePlan plan);
  ~NodeAgent();
  // Starts everything; returns "" or an error (nothing to clean up then).
  std::string start();
  int exit_code() const { return exit_code_; }

 private:
  void on_signal(int signal);
  void on_assignment(const rendezvous::Assignment& assignment);
  void on_master_message(const rendezvous::Message& message);
  void on_lost(const std::string& why);
  void on_group_finished(const GroupOutcome& outcome);
  void run_doctor_checks(const rendezvous::Assignment& assignment);
  std::string check_socket_ifnames(std::string& selected_ifname);
  void report_problem(const std::string& message, int exit_code);
  void finish(int exit_code);
  void wait_for_signals();
  void send_worker_states();
  void schedule_state_reports();
  void wait_for_enter();
  void watch_join();
  NodeAssignment to_node_assignment(const rendezvous::Assignment& a, const std::string& ifname) const;

  boost::asio::io_context& io_;
  OrphanGuard& guard_;
  NodePlan plan_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer exit_timer_;   // bounds waiting for the master after a local stop
  boost::asio::steady_timer state_timer_;
  boost::asio::steady_timer join_timer_;   // explains (and bounds) a master that cannot be reached
  int unanswered_probes_ = 0;
  int refused_probes_ = 0;  // periodic worker-state reports for `ddplaunch status`
  boost::asio::posix::stream_descriptor terminal_;  // Enter resumes paused ranks
  StatusChannel status_;
  GroupSupervisor supervisor_;
  std::unique_ptr<JobCoordinator> coordinator_;
  std::unique_ptr<rendezvous::Server> server_;
  std::unique_ptr<rendezvous::Client> client_;

  long generation_ = 0;
  int node_rank_ = -1;
  std::optional<long> rejoin_generation_;  // restart ordered: rejoin when workers are gone
  std::optional<long> stop_generation_;    // stop ordered: report finished when workers are gone
  bool interrupted_ = false;
  bool lost_master_ = false;
  bool finished_ = false;
  bool env_conflicts_reported_ = false;
  int exit_code_ = 1;        // what main returns; set by finish()
  int local_problem_code_ = 0;  // a local interrupt or failed check: what this node reports as its own status
  char terminal_buffer_[256];
};

}  // namespace ddplaunch
