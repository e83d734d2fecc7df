// JobCoordinator: rendezvous and node messages → JobPolicy events; decisions → effects.
#include "master/job_coordinator.h"

#include <cstdio>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "master/status_table.h"
#include "ddplaunch/rendezvous/generation_format.h"
#include "log_setup.h"
#include "ddplaunch/base/overloaded.h"
#include "ddplaunch/preflight/port.h"
#include "ddplaunch/base/time_units.h"
#include "master/job_end_report.h"
#include "output/terminal_writer.h"
#include "policy/rank_report_period.h"

namespace ddplaunch {

namespace {
constexpr auto kSweepInterval = std::chrono::seconds(1);
}  // namespace

JobCoordinator::JobCoordinator(boost::asio::io_context& io, CoordinatorSettings settings)
    : io_(io),
      settings_(std::move(settings)),
      history_seed_(load_history_seed(settings_)),
      policy_(policy_settings(settings_, history_seed_)),
      backoff_timer_(io),
      deadline_timer_(io),
      sweep_timer_(io),
      fenced_([this](const JobPolicy::Decisions& d) { carry_out_each(d); }, [](const decision::Log& l) { log_decision(l); }),
      timeline_(policy_, settings_.config),
      hang_investigation_(io, settings_, history_seed_, policy_, timeline_,
                  {.ask_nodes =
                       [this](long round) {
                         if (server_)
                           server_->broadcast(messages::encode(policy_.generation(), messages::CollectStacks{round}));
                       },
                   .hang_found =
                       [this](Generation generation, int rank, const std::string& detail) {
                         carry_out(policy_.on_hang(generation, rank, detail, PolicyClock::now()));
                       }}),
      stragglers_(timeline_),
      queries_(settings_.config, policy_, hang_investigation_, stragglers_, timeline_, [this] { return server_; }) {}

void JobCoordinator::attach(rendezvous::Server& server) {
  server_channel_ = std::make_unique<ServerJobChannel>(server);
  server_ = server_channel_.get();
}

void JobCoordinator::take_over() {
  if (!settings_.restored_state) return;
  auto restored = JobPolicy::restore_state(policy_settings(settings_, history_seed_), *settings_.restored_state, PolicyClock::now());
  if (!restored) {
    spdlog::error("cannot load the last coordinator's state from etcd ({}): this coordinator starts the job's "
                  "policy afresh (restart budgets and the learnt init deadline start over)",
                  restored.error);
    return;
  }
  policy_ = std::move(restored.value->policy);
  timeline_.record_instant(timeline::kJobLane, "coordinator moved", "coordinator",
                           "this launcher took the job over with the last coordinator's state");
  hang_investigation_.seed_from_state(restored->carried);
  carry_out(policy_.on_coordinator_moved());
  schedule_sweep();
}

// The answer the rendezvous server gets is made here, from the policy's PlanGeneration (or
// RefuseJob) for these nodes, and returned: the other decisions of the moment are carried out
// as usual. A plan follows a generation start etcd already confirmed, so nothing waits.
rendezvous::JobPlan JobCoordinator::plan(Generation generation, const std::vector<rendezvous::NodeRecord>& nodes) {
  JobPolicy::Decisions pending;
  if (server_) pending = policy_.on_rendezvous_listening(server_->rendezvous_port());
  for (Decision& d : policy_.on_nodes_joined(generation, nodes, PolicyClock::now())) pending.push_back(std::move(d));
  rendezvous::JobPlan answer;
  JobPolicy::Decisions others;
  while (!pending.empty()) {
    const Decision d = std::move(pending.front());
    pending.erase(pending.begin());
    if (auto* chosen = std::get_if<decision::PlanGeneration>(&d)) {
      Result<rendezvous::JobPlan> planned = plan_generation(*chosen, nodes);
      JobPolicy::Decisions more = planned ? policy_.on_generation_planned(chosen->generation, planned->worker_master_port)
                                          : policy_.on_plan_failed(planned.error);
      if (planned) answer = std::move(*planned.value);
      for (Decision& next : more) pending.push_back(std::move(next));
    } else if (auto* refuse = std::get_if<decision::RefuseJob>(&d)) {
      answer.refusal = refuse->reason;  // the rendezvous server tells every node
    } else {
      others.push_back(d);
    }
  }
  carry_out(others, Fence::AlreadyConfirmed);
  if (policy_.phase() != JobPhase::Ended) schedule_sweep();
  return answer;
}

// Choosing or checking the worker port is the one effect that must happen inside planning,
// on the master, just before the workers start; when it fails, the policy refuses the job.
Result<rendezvous::JobPlan> JobCoordinator::plan_generation(const decision::PlanGeneration& chosen,
                                                            const std::vector<rendezvous::NodeRecord>& nodes) {
  using R = Result<rendezvous::JobPlan>;
  const auto generation = chosen.generation;
  const LaunchConfig& c = settings_.config;
  int port = 0;
  if (chosen.fresh_port) {
    auto free_port = preflight::find_free_port(settings_.worker_bind_address);
    if (!free_port) return R::failure("no free worker port on the master: " + free_port.error);
    if (c.worker_port.fixed)
      spdlog::warn("worker port {} was in use in the last generation; generation {} uses free port {} instead",
                   *c.worker_port.fixed, generation, *free_port);
    port = *free_port;
  } else {
    port = c.worker_port.fixed.value_or(0);
    if (auto bindable = preflight::check_port_bindable(settings_.worker_bind_address, port); !bindable)
      return R::failure(fmt::format("worker port check failed on the master (node 0): {}", bindable.message));
  }
  rendezvous::JobPlan plan;
  plan.worker_master_addr = settings_.worker_master_addr;
  // An elected coordinator need not be slot 0: rank 0 (and its c10d store) is on slot 0's node.
  // (Its free port was found here: a port taken there fails init, and the next generation
  // picks a fresh one.)
  if (settings_.elected && !nodes.empty() && !nodes.front().observed_address.empty())
    plan.worker_master_addr = nodes.front().observed_address;
  plan.worker_master_port = port;
  plan.init_deadline_s = chosen.init_deadline_s;
  plan.run_id = c.job_id;
  plan.run_nonce = settings_.run_nonce;
  int world = 0;
  for (const auto& n : nodes) world += n.facts.nproc;
  // The nodes report at a period set by their count: the watches read them accordingly.
  const auto report_period = rank_report_period(nodes.size());
  hang_investigation_.start_generation(generation, world, report_period);
  stragglers_.start_generation(generation, world, report_period, PolicyClock::now());
  timeline_.begin_generation(generation, nodes, world, chosen.init_deadline_s);
  spdlog::info("generation {}: {} node(s), world size {}, MASTER_ADDR={} MASTER_PORT={}, init deadline {} ({})",
               generation, nodes.size(), world, plan.worker_master_addr, port, human_duration(chosen.init_deadline_s),
               chosen.init_deadline_explained);
  return R::success(std::move(plan));
}

// Every kind is named here (-Werror=switch): a kind added to messages::Kind without a line
// here does not compile.
JobCoordinator::Handler JobCoordinator::handler_for(messages::Kind kind) {
  using K = messages::Kind;
  switch (kind) {
    case K::WorkerFailed: return &JobCoordinator::on_worker_failed;
    case K::NodeFinished: return &JobCoordinator::on_node_finished;
    case K::NodeProblem: return &JobCoordinator::on_node_problem;
    case K::RankStates: return &JobCoordinator::on_rank_states;
    case K::NodeReport: return &JobCoordinator::on_node_report;
    case K::ProbeResults: return &JobCoordinator::on_probe_results;
    case K::RankStacks:
      return [](JobCoordinator& c, int node_rank, const rendezvous::Message& m) { c.hang_investigation_.on_rank_stacks(node_rank, m); };
    case K::TimelineEvents:
      return [](JobCoordinator& c, int node_rank, const rendezvous::Message& m) { c.timeline_.on_node_events(node_rank, m); };
    case K::RankOutput:
      return [](JobCoordinator& c, int, const rendezvous::Message& m) { c.queries_.on_rank_output(m); };
    // A rank's debugger: the master's DebugRelay takes these before the coordinator.
    case K::DebugStopped:
    case K::DebugOutput:
    case K::DebugResumed:
    // What the master sends the nodes: never heard from one.
    case K::Restart:
    case K::Stop:
    case K::JobEnd:
    case K::Resume:
    case K::ProbeVerdict:
    case K::Standby:
    case K::OutputFilter:
    case K::FollowRank:
    case K::CollectStacks:
    case K::DebugInput:
    case K::DebugAttachGdb:
      return nullptr;
  }
  return nullptr;
}

void JobCoordinator::on_message(int node_rank, const rendezvous::Message& m) {
  if (node_rank < 0) return;  // only joined nodes speak for the job
  auto kind = messages::kind_of(m);
  if (!kind) return;  // a newer peer may send more kinds
  if (Handler handler = handler_for(*kind)) handler(*this, node_rank, m);
}

bool JobCoordinator::node_holds(int node, int rank, Generation generation) const {
  return generation == policy_.generation() && policy_.ranks().holds(node, rank);
}

// The hostname its launcher joined with (proved with the token on that connection), else the
// address the connection came from.
std::string JobCoordinator::node_host(int node) const {
  for (const rendezvous::NodeRecord& record : policy_.nodes())
    if (record.node_rank == node)
      return !record.facts.hostname.empty() ? record.facts.hostname : record.observed_address;
  return "?";
}

void JobCoordinator::on_debugger_quit(Generation generation, int rank) {
  carry_out(policy_.on_debugger_quit(generation, rank));
}

void JobCoordinator::on_worker_failed(int node_rank, const rendezvous::Message& m) {
  if (auto report = messages::decode_failure(m)) {
    report->failure.node_rank = node_rank;  // the connection says who it is, not the payload
    timeline_.record_failure(node_rank, m.generation, *report);
    carry_out(policy_.on_worker_failed(node_rank, m.generation, *report, PolicyClock::now()));
  }
}

void JobCoordinator::on_node_finished(int node_rank, const rendezvous::Message& m) {
  if (auto finished = messages::decode_node_finished(m))
    carry_out(policy_.on_node_finished(node_rank, m.generation, finished->exit_code));
}

void JobCoordinator::on_node_problem(int node_rank, const rendezvous::Message& m) {
  if (auto problem = messages::decode_node_problem(m))
    carry_out(policy_.on_node_problem(node_rank, m.generation, problem->message, problem->exit_code));
}

void JobCoordinator::on_rank_states(int node_rank, const rendezvous::Message& m) {
  auto states = messages::decode_rank_states(m);
  if (!states) return;
  queries_.note_reporting_node(node_rank, ReportingNode{states->host, states->log_dir, m.generation});
  hang_investigation_.on_ranks_reported(m.generation, states->ranks, PolicyClock::now());
  stragglers_.on_ranks_reported(node_rank, states->host, m.generation, states->ranks, PolicyClock::now(),
                                states->signals);
  carry_out(policy_.on_ranks_reported(node_rank, m.generation, states->ranks, PolicyClock::now()));
}

void JobCoordinator::on_node_report(int node_rank, const rendezvous::Message& m) {
  if (auto row = messages::decode_node_report(m)) carry_out(policy_.on_doctor_report(node_rank, row->ok, row->nic, row->problems));
}

void JobCoordinator::on_probe_results(int node_rank, const rendezvous::Message& m) {
  if (auto results = messages::decode_probe_results(m))
    carry_out(policy_.on_probe_results(node_rank, m.generation, std::move(results->links)));
}

void JobCoordinator::on_node_lost(const rendezvous::NodeRecord& node, const std::string& why) {
  timeline_.record_instant(node.node_rank, "node lost", "node", why);
  if (policy_.membership_enabled()) return carry_out(policy_.on_member_lost(node, why, PolicyClock::now()));
  carry_out(policy_.on_node_lost(node.node_rank, why));
}

void JobCoordinator::on_member_joined(const rendezvous::NodeRecord& node) {
  timeline_.record_instant(timeline::kJobLane, "launcher joined", "membership", node.facts.hostname);
  carry_out(policy_.on_member_joined(node, PolicyClock::now()));
  if (!sweeping_) schedule_sweep();  // the last call and the wait for a launcher are ticks
}

void JobCoordinator::on_foreign_store_client(const std::string& peer) {
  carry_out(policy_.on_foreign_store_client(peer, server_ ? server_->rendezvous_port() : 0));
}

void JobCoordinator::on_join_timeout(const rendezvous::JoinTimeout& timeout) {
  carry_out(policy_.on_join_timeout(timeout.what, timeout.during_rejoin));
}

void JobCoordinator::close() {
  fenced_.clear();  // a coordinator that stops acting orders nothing more
  backoff_timer_.cancel();
  deadline_timer_.cancel();
  sweep_timer_.cancel();
  hang_investigation_.close();
}

void JobCoordinator::schedule_sweep() {
  sweeping_ = true;
  sweep_timer_.expires_after(kSweepInterval);
  sweep_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    sweeping_ = false;
    if (policy_.phase() == JobPhase::Ended) return;
    carry_out(policy_.on_tick(PolicyClock::now()));
    hang_investigation_.check(PolicyClock::now());
    hang_investigation_.save_learnt_step_interval();
    stragglers_.check(PolicyClock::now());
    if (auto holding = stragglers_.holding_back(PolicyClock::now()))
      carry_out(policy_.on_persistent_straggler(holding->node, holding->rank, holding->held_s, holding->what,
                                                PolicyClock::now()));
    schedule_sweep();
  });
}

// One handler per decision: std::visit with Overloaded refuses to compile when a decision
// has no handler here.
namespace {
// Decisions that make nodes start workers: a coordinator orders them only while it leads.
bool starts_a_generation(const JobPolicy::Decisions& decisions) {
  for (const auto& d : decisions) {
    if (std::holds_alternative<decision::BeginGeneration>(d)) return true;
    if (auto* restart = std::get_if<decision::OrderRestart>(&d); restart && !restart->hold) return true;
  }
  return false;
}
}  // namespace

// Each batch is carried out whole and in the order decided: nothing the coordinator calls
// calls it back before returning (the rendezvous server plans a generation, and reports a
// node it dropped, from the event loop), so no event's decisions interleave with another's.
void JobCoordinator::carry_out(const JobPolicy::Decisions& decisions, Fence fence) {
  if (decisions.empty()) return;
  if (!settings_.save_state) return carry_out_each(decisions);
  // etcd: the state after every decision, for the coordinator that may follow (fenced there).
  // A generation starts only once etcd confirmed this launcher still leads, so a deposed or
  // cut-off coordinator starts none (its changes wait while etcd does not answer).
  const std::string state = policy_.save_state(PolicyClock::now(), hang_investigation_.carried_state());
  const bool fenced = starts_a_generation(decisions);
  if (fence == Fence::AlreadyConfirmed || (fenced_.idle() && !fenced)) {
    carry_out_each(decisions);
    settings_.save_state(state, {});
    return;
  }
  settings_.save_state(state, fenced_.hold(decisions, fenced));
}

void JobCoordinator::carry_out_each(const JobPolicy::Decisions& decisions) {
  timeline_.record_decisions(decisions);
  for (const auto& d : decisions) std::visit(Overloaded{
      [](const decision::Log& log) { log_decision(log); },
      // Decided only while planning, where plan() makes its answer of it.
      [](const decision::PlanGeneration&) {},
      [this](const decision::RefuseJob& refuse) {
        // plan() answers a refusal itself; one at any other time (none is decided today) still
        // reaches every node, as an abort.
        if (server_) server_->abort(refuse.reason);
      },
      [this](const decision::ScheduleRestart& restart) {
        backoff_timer_.expires_after(std::chrono::microseconds(static_cast<long long>(restart.delay_s * 1e6)));
        backoff_timer_.async_wait([this, next = restart.generation](const boost::system::error_code& ec) {
          if (!ec) carry_out(policy_.on_backoff_elapsed(next));
        });
      },
      [this](const decision::OrderRestart& order) {
        if (!server_) return;
        // The order first: the nodes hear it before anything of the next generation (the server
        // plans right after this batch when every node of it is ready already).
        server_->broadcast(messages::encode(order.generation, messages::Restart{order.reason}));
        const auto generation = order.generation;
        if (!policy_.membership_enabled()) server_->begin_generation(generation);
        else if (!order.hold) server_->begin_generation(generation, order.members, order.ran_workers);
      },
      [this](const decision::BeginGeneration& begin) {
        if (server_)
          server_->begin_generation(begin.generation, begin.members, begin.ran_workers);
      },
      [this](const decision::TellMember& tell) {
        if (!server_) return;
        if (tell.dismiss) server_->dismiss_member(tell.member_id, tell.text);
        else server_->send_to_member(tell.member_id, messages::encode(policy_.generation(), messages::Standby{tell.text, settings_.run_nonce}));
      },
      [this](const decision::OrderStop& stop) {
        if (server_) server_->broadcast(messages::encode(stop.generation, messages::Stop{stop.reason, stop.exit_code}));
      },
      [this](const decision::EndJob& end) {
        timeline_.write_files();
        if (!settings_.doctor) report_job_end(settings_.config, timeline_, stragglers_, end.exit_code);
        hang_investigation_.finish(troubled_hosts(timeline_, stragglers_));
        backoff_timer_.cancel();
        deadline_timer_.cancel();
        sweep_timer_.cancel();
        if (server_) server_->broadcast(messages::encode(policy_.generation(), messages::JobEnd{end.exit_code}));
      },
      [this](const decision::AbortJoin& abort) {
        if (server_) server_->abort(abort.reason);
      },
      [this](const decision::ArmInitDeadline& arm) {
        deadline_timer_.expires_after(seconds_to_ms(arm.seconds));
        deadline_timer_.async_wait([this, gen = arm.generation, serial = arm.serial](const boost::system::error_code& ec) {
          if (!ec) carry_out(policy_.on_init_deadline(gen, serial, PolicyClock::now()));
        });
      },
      [this](const decision::StartWorkers& start) {
        if (server_) server_->broadcast(messages::encode(start.generation, messages::ProbeVerdict{start.ifname}));
      },
      [](const decision::PrintTable& table) {
        terminal_write(STDOUT_FILENO, table.text);
      },
  }, d);
}

}  // namespace ddplaunch
