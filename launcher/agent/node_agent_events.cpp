// NodeAgent's one place for what its parts report (NodeEvent): the workers (GroupSupervisor),
// the followed ranks, the debuggers, the terminal, the join watch and the etcd link each
// publish typed events; each kind has its handler here (std::visit with Overloaded: a kind
// without one does not compile), as the master's orders have theirs in on_master_message.
#include <spdlog/spdlog.h>

#include "agent/node_agent.h"
#include "ddplaunch/base/overloaded.h"
#include "wire/launcher_messages.h"

namespace ddplaunch {

void NodeAgent::publish(const NodeEvent& event) {
  using namespace node_event;
  std::visit(
      Overloaded{
          // The workers.
          [this](const WorkerFailed& e) { on_worker_failed(e.failure); },
          [this](const PhasesChanged&) { rank_states_.send_soon(); },
          [this](const RankPaused& e) { paused_prompt_.on_paused(e.worker, job_master_); },
          [this](const GroupFinished& e) { on_group_finished(e.outcome); },
          [this](const DebuggerStopped& e) { debug_sessions_.on_stopped(e.worker, e.where, e.reason); },
          [this](const DebuggerOutput& e) { debug_sessions_.on_output(e.worker, e.lines, e.prompt); },
          [this](const DebuggerLeft& e) { debug_sessions_.on_left(e.worker); },
          [this](const RankPromptShown& e) { debug_sessions_.on_rank_prompt(e.worker, e.shown, e.secret); },
          [this](const FollowedLine& e) { follower_.on_line(e.rank, e.line); },
          // The node's other parts.
          [this](const FollowedRanksChanged& e) { supervisor_.follow_ranks(e.ranks); },
          [this](const GdbHoldChanged& hold) {
            supervisor_.set_gdb_attached(hold.worker, hold.attached);
            rank_states_.send_now();
          },
          [this](const ResumeAsked&) {
            if (policy_.state() == NodeState::Finished) return;
            spdlog::info("resuming paused ranks");
            resume_paused_ranks();
          },
          [this](const JoinConnected&) { carry_out(policy_.on_join_probe(JoinProbe::Connected, "", 0)); },
          [this](const JoinProbed& e) { carry_out(policy_.on_join_probe(e.outcome, e.message, e.interval_s)); },
          // The etcd link.
          [this](const CoordinatorStoreChecked& e) {
            carry_out(e.error.empty() ? policy_.await_first_coordinator() : policy_.on_coordinator_store_unusable(e.error));
          },
          [this](const Elected&) { carry_out(policy_.on_elected()); },
          [this](const CoordinatorNamed& e) {
            record_job(e.host, e.port);  // etcd: where the first coordinator was; the record keeps this launcher's token
            join_master(e.host, e.port, e.serial);
          },
          [this](const CoordinatorLeft&) { retire_client(); },
          [this](const CoordinatorLost& e) {
            carry_out(policy_.on_coordinator_lost(e.why, supervisor_.active(), e.address));
          },
          [this](const SeatLost& e) { carry_out(policy_.on_seat_lost(e.why, supervisor_.active())); },
          [this](const CoordinatorWaitOver& e) { carry_out(policy_.on_coordinator_wait_over(e.serial)); },
      },
      event);
}

// A worker's first failure: its last lines and the timeline first, so that the master has
// them before the failure.
void NodeAgent::on_worker_failed(const WorkerFailure& failure) {
  outer_root_cause_.on_failure(failure, policy_.generation());
  follower_.flush();
  rank_states_.send_timeline();
  send(messages::encode(policy_.generation(), FailureReport{failure, plan_.hostname}));
}

// --pause-ranks: the master's resume order, SIGCONT, or Enter at this node's terminal.
void NodeAgent::resume_paused_ranks() {
  supervisor_.resume_paused();
  rank_states_.send_now();
}

}  // namespace ddplaunch
