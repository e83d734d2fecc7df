// NodeAgent: the node's state machine — one function per transition, top to bottom.
#include "agent/node_agent.h"

#include <unistd.h>

#include <csignal>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "wire/launcher_messages.h"
#include "wire/master_orders.h"
#include "agent/node_assignment.h"
#include "agent/socket_ifname_choice.h"
#include "policy/rank_report_period.h"
#include "ddplaunch/preflight/env_conflicts.h"
#include "ddplaunch/preflight/resolve.h"
#include "ddplaunch/base/exit_codes.h"
#include "ddplaunch/base/overloaded.h"
#include "ddplaunch/rendezvous/generation_format.h"
#include "log_setup.h"
#include "ddplaunch/base/time_units.h"

namespace ddplaunch {

namespace {
NodePolicySettings node_policy_settings(const NodePlan& plan) {
  NodePolicySettings s;
  s.host_chosen_by_address = plan.host_chosen_by_address;
  s.host_server = plan.host_server;
  s.grace_s = plan.config.grace_s;
  s.hostname = plan.hostname;
  s.master_host = plan.master_host;
  s.master_ip = plan.master_ip;
  s.rendezvous_port = plan.rendezvous_port;
  s.master_is_loopback = preflight::is_loopback(plan.master_ip);
  s.nodes = plan.config.nodes;
  s.join_timeout_s = plan.config.join_timeout_s;
  // etcd: a lost coordinator's lease expires, another launcher is elected and publishes its
  // address; then the join itself.
  if (etcd_enabled(plan.config)) s.coordinator_wait_s = plan.config.etcd.lease_ttl_s + plan.config.join_timeout_s;
  return s;
}
}  // namespace

NodeAgent::NodeAgent(boost::asio::io_context& io, OrphanGuard& guard, NodePlan plan)
    : io_(io),
      guard_(guard),
      plan_(std::move(plan)),
      signals_(io, SIGINT, SIGTERM),
      exit_timer_(io),
      hosting_retry_timer_(io),
      join_watch_(io, plan_, *this),
      status_(io),
      supervisor_(io, guard, status_, group_callbacks_publishing_to(*this)),
      follower_(io, *this, *this),
      rank_states_(io, plan_.hostname, plan_.config.log_dir, *this, *this),
      debug_sessions_(io, plan_.hostname, RankDebugSeams{*this, *this, *this, *this}),
      paused_prompt_(io, plan_, *this),
      host_(io, plan_),
      peer_probe_(io, plan_, *this, *this),
      stack_requests_(io, plan_.hostname, *this, *this),
      policy_(node_policy_settings(plan_)),
      outer_root_cause_(plan_.base_env, plan_.hostname) {
  signals_.add(SIGHUP);
  signals_.add(SIGCONT);
  signals_.add(SIGUSR1);  // Slurm's --signal=USR1@120: forwarded, never fatal to the launcher
  signals_.add(SIGUSR2);
}

// ---- transitions ------------------------------------------------------------------------

// joining / rejoining → probing or running: the policy says whether the peers are probed
// first or the workers start (carry_out: TakeAssignment, ProbePeers, StartWorkers).
void NodeAgent::on_assignment(const rendezvous::Assignment& a) {
  NodePolicy::Decisions decisions =
      policy_.on_assignment(AssignmentFacts{a.generation, a.node_rank, a.node_count, a.world_size, peer_probe_.due(a)});
  if (!decisions.empty()) assignment_ = a;  // taken (a duplicate is not: the probed one stays)
  carry_out(decisions);
}

// probing → running: every node probed its peers; the master chose the interface (or kept
// the user's). A refusal comes as a stop order instead.
void NodeAgent::on_probe_verdict(Generation generation, const std::string& ifname) {
  carry_out(policy_.on_probe_verdict(generation, ifname));
}

void NodeAgent::start_generation(const rendezvous::Assignment& a, const std::string& probe_ifname) {
  if (plan_.doctor) {
    client_->send(messages::encode(policy_.generation(), doctor_node_report(plan_, client_->local_address())));
    return;
  }
  std::string ifname;
  if (std::string problem = choose_socket_ifname(plan_, client_->local_address(), probe_ifname, ifname); !problem.empty())
    return report_problem(problem, kExitConfigError);
  GroupSpec spec;
  spec.program = plan_.config.program;
  spec.assignment = node_assignment(a, plan_, status_.path(), ifname, host_.port_or(plan_.rendezvous_port));
  spec.base_env = plan_.base_env;
  spec.hostname = plan_.hostname;
  spec.log_dir = plan_.config.log_dir;
  spec.pause_ranks = plan_.config.pause_ranks;
  spec.local_ranks_filter = plan_.config.local_ranks_filter;
  spec.ranks_filter = plan_.config.ranks_filter;
  spec.collapse_lines = plan_.config.collapse_output == CollapseOutput::On ||
                        (plan_.config.collapse_output == CollapseOutput::Auto && ::isatty(STDOUT_FILENO) == 1);
  spec.inherit_stdin = plan_.inherit_stdin;
  spec.init_grace_s = plan_.config.init_grace_s;
  spec.redirects = plan_.config.redirects;
  spec.tee = plan_.config.tee;
  spec.placement = plan_.placement;
  spec.virtual_local_rank = plan_.config.virtual_local_rank;
  if (!env_conflicts_reported_) {
    env_conflicts_reported_ = true;
    // Only the torchrun contract's keys are compared: a known (empty) torch version spares
    // this environment the torch/version.py search the workers' own need.
    NodeAssignment contract_only = spec.assignment;
    contract_only.torch_version = "";
    auto conflicts = preflight::find_env_conflicts(plan_.base_env, build_worker_environment({}, contract_only, 0));
    if (!conflicts.empty()) spdlog::warn("{}", preflight::render_env_conflicts(conflicts));
  }
  spdlog::info("generation {}: starting {} worker(s), global ranks {}..{} of {}", policy_.generation(), plan_.nproc,
               a.rank_offset, a.rank_offset + plan_.nproc - 1, a.world_size);
  supervisor_.start(spec);
  rank_states_.send_now();
  rank_states_.send_periodically(
      rank_report_period(static_cast<std::size_t>(a.node_count)));
}

void NodeAgent::on_restart_order(Generation generation, const std::string& reason) {
  carry_out(policy_.on_restart_order(generation, reason, supervisor_.active()));
}

void NodeAgent::on_stop_order(Generation generation, const std::string& reason) {
  if (policy_.state() != NodeState::Finished && policy_.state() != NodeState::Joining)
    outer_root_cause_.on_stop_reason(reason);
  carry_out(policy_.on_stop_order(generation, reason, supervisor_.active()));
}

void NodeAgent::on_job_end(int exit_code) { carry_out(policy_.on_job_end(exit_code)); }

// Every worker ended by itself (the first failed rank names the node's status), or the stop
// this node ordered is complete.
void NodeAgent::on_group_finished(const GroupOutcome& outcome) {
  follower_.flush();
  rank_states_.send_now();
  int code = 0;
  std::string summary = "all workers succeeded";
  for (const auto& [rank, status] : outcome.statuses) {
    if (status.success()) continue;
    code = status.shell_code();
    summary = fmt::format("rank {}: {}", rank, status.describe());
    break;
  }
  carry_out(policy_.on_group_finished(outcome.generation, code, summary));
}

void NodeAgent::on_lost(const std::string& why, int exit_code) {
  carry_out(policy_.on_lost(why, exit_code, supervisor_.active()));
}

// joining → spare: the job has its nodes; this launcher waits idle (no join deadline) until
// the master gives it the slot of a lost or excluded node, or the job ends.
void NodeAgent::on_standby(const std::string& reason) { carry_out(policy_.on_standby(reason)); }

void NodeAgent::on_dismissed(const std::string& reason) {
  carry_out(policy_.on_dismissed(reason, supervisor_.active()));
}

void NodeAgent::on_signal(int signal) {
  if (signal == SIGCONT) return resume_paused_ranks();
  if (signal == SIGUSR1 || signal == SIGUSR2) {  // e.g. checkpoint before preemption
    int sent = supervisor_.forward_signal(signal);
    spdlog::info("received {}: forwarded to {} worker process(es) on {}; the job goes on", signal_name(signal), sent,
                 plan_.hostname);
    return;
  }
  carry_out(policy_.on_interrupt(signal, supervisor_.active()));
}

// One handler per node decision: std::visit with Overloaded refuses to compile when a
// decision has no handler here.
void NodeAgent::carry_out(const NodePolicy::Decisions& decisions) {
  for (const auto& d : decisions) std::visit(Overloaded{
      [](const decision::Log& log) { log_decision(log); },
      [this](const node_decision::StopWorkers& stop) {
        supervisor_.stop(stop.now ? std::chrono::milliseconds(0) : seconds_to_ms(plan_.config.grace_s));
      },
      [this](const node_decision::Rejoin& rejoin) { client_->rejoin(rejoin.generation); },
      [this](const node_decision::ReportFinished& report) {
        client_->send(messages::encode(report.generation, messages::NodeFinished{report.exit_code, report.summary}));
      },
      [this](const node_decision::ReportProblem& problem) {
        if (client_) client_->send(messages::encode(problem.generation, messages::NodeProblem{problem.text, problem.exit_code}));
      },
      [this](const node_decision::ArmExitTimer& timer) {
        exit_timer_.expires_after(seconds_to_ms(timer.seconds));
        exit_timer_.async_wait([this, code = timer.exit_code](const boost::system::error_code& ec) {
          if (!ec) carry_out(policy_.on_exit_timer(code));
        });
      },
      [this](const node_decision::Finish& end) { finish(end.exit_code); },
      [this](const node_decision::JoinCoordinator& join) {
        if (etcd_) etcd_->join_coordinator(join.after_s);
      },
      [this](const node_decision::JoinRendezvous& join) {
        if (join.as_node) host_.drop();  // another launcher of this job hosts it here: this one is a node
        join_and_watch(host_.port_or(plan_.rendezvous_port));
      },
      [this](const node_decision::TakeAssignment&) {
        join_watch_.close();  // in
        if (etcd_) etcd_->seat().joined_run(assignment_.run_nonce);
        node_rank_ = assignment_.node_rank;
        set_log_node(assignment_.node_rank, assignment_.node_count);
      },
      [this](const node_decision::ProbePeers&) { peer_probe_.start(assignment_, policy_.generation()); },
      [this](const node_decision::StartWorkers& start) {
        peer_probe_.close();
        start_generation(assignment_, start.probe_ifname);
      },
      [this](const node_decision::WaitAsSpare&) {
        client_->wait_as_spare();
        join_watch_.close();
        peer_probe_.close();
      },
      [this](const node_decision::HostCoordinator&) {
        if (etcd_) etcd_->host_coordinator();
      },
      [this](const node_decision::RetryHosting& retry) {
        hosting_retry_timer_.expires_after(seconds_to_ms(retry.after_s));
        hosting_retry_timer_.async_wait([this](const boost::system::error_code& ec) {
          if (!ec && !policy_.finished()) try_hosting();
        });
      },
      [this](const node_decision::ArmCoordinatorWait& wait) {
        if (etcd_) etcd_->wait_for_coordinator(wait.seconds, wait.serial);
      },
  }, d);
}

// ---- steps ------------------------------------------------------------------------------

// Orders from the master, one handler per kind (std::visit: every kind has one).
void NodeAgent::on_master_message(const rendezvous::Message& m) {
  const std::optional<messages::MasterOrder> order = messages::decode_master_order(m);
  if (!order) return;
  const Generation generation = m.generation;
  std::visit(
      Overloaded{
          [&](const messages::Restart& restart) { on_restart_order(generation, restart.reason); },
          [&](const messages::Stop& stop) { on_stop_order(generation, stop.reason); },
          [&](const messages::JobEnd& end) { on_job_end(end.exit_code); },
          [&](const messages::ProbeVerdict& verdict) { on_probe_verdict(generation, verdict.ifname); },
          [&](const messages::Standby& standby) {
            if (etcd_) etcd_->seat().joined_run(standby.run_nonce);
            on_standby(standby.reason);
          },
          [&](const messages::CollectStacks& ask) { stack_requests_.on_request(ask.request, status_.directory()); },
          [&](const messages::DebugAttachGdb& gdb) { debug_sessions_.attach_gdb(generation, gdb.rank); },
          [&](const messages::OutputFilter& filter) {
            plan_.config.ranks_filter = filter.ranks;  // the next generations too
            supervisor_.show_ranks(filter.ranks);
          },
          [&](const messages::FollowRank& follow) {
            if (!debug_sessions_.master_proven()) return;  // its output is only for a proven master
            if (!follower_.follow(follow.rank, follow.seconds)) return;
            if (auto w = worker_of_rank(follow.rank))  // a new follower starts with the lines the rank printed last
              for (const auto& line : w->output.tail()) follower_.on_line(w->global_rank, line);
          },
          [&](const messages::DebugInput& input) { debug_sessions_.input(generation, input.rank, input.line); },
          [&](const messages::Resume&) { resume_paused_ranks(); },
      },
      *order);
}

void NodeAgent::report_problem(const std::string& message, int exit_code) {
  carry_out(policy_.on_local_problem(message, exit_code));
}

void NodeAgent::wait_for_signals() {
  signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (ec || policy_.state() == NodeState::Finished) return;
    on_signal(signal);
    if (policy_.state() != NodeState::Finished) wait_for_signals();
  });
}

// The master's debug console (its relay is the RendezvousHost's).
void NodeAgent::on_console_line(const std::string& line) { host_.on_console_line(line); }

}  // namespace ddplaunch
