// JobPolicy in membership mode: launchers join and leave; a spare takes a lost
// node's slot, an elastic job shrinks or grows, a bad node is excluded. Membership holds the
// rules; here its changes become orders. None of them spends the restart budget.
#include <fmt/format.h>

#include "ddplaunch/rendezvous/generation_format.h"
#include "policy/job_policy.h"
#include "policy/node_checks.h"

namespace ddplaunch {

using namespace decision;

std::string JobPolicy::membership_table(TimePoint now) const { return membership_ ? membership_->table(now) : ""; }

JobPolicy::Decisions JobPolicy::on_member_joined(const rendezvous::NodeRecord& record, TimePoint now) {
  if (membership_ && phase_ == JobPhase::Ended && first_generation_ > Generation{0})
    return {TellMember{record.member_id, "the job already ended (its last coordinator was lost before every launcher "
                                         "heard it)", true}};
  if (!membership_ || phase_ == JobPhase::Ended) return {};
  const std::string& host = record.facts.hostname;
  // A launcher joining a running job is checked against its nodes before it may take a slot.
  if (membership_->started() && !nodes_.records().empty()) {
    std::vector<rendezvous::NodeRecord> with_it = nodes_.records();
    with_it.push_back(record);
    with_it.back().node_rank = static_cast<int>(nodes_.records().size());
    NodeFactsVerdict facts = check_node_facts(with_it, settings_.worker_master_addr, settings_.master_is_loopback,
                                              settings_.refuse_version_mismatch);
    if (!facts.refusal.empty()) {
      const std::string why = fmt::format("the launcher on host {} ({}) cannot join the running job: {}", host,
                                          record.observed_address, facts.refusal);
      return {Log{Severity::Warn, why}, TellMember{record.member_id, why, true}};
    }
  }
  std::string refusal;
  MembershipChange change = membership_->on_join(record.member_id, host, now, &refusal, record.node_rank);
  if (!refusal.empty())
    return {Log{Severity::Warn, fmt::format("refused the launcher on host {} ({}): {}", host, record.observed_address, refusal)},
            TellMember{record.member_id, refusal, true}};
  Decisions out;
  const Member* member = membership_->member(record.member_id);
  // A troubled host is named once, with its first launcher (a host may run several).
  if (member && membership_->first_of_its_host(record.member_id)) {
    std::string standing;
    if (membership_->kept_in_reserve(record.member_id))
      standing = "it is kept as a spare: a lost or swapped node's slot goes to the other spares first";
    else if (member->role == MemberRole::Spare)
      standing = "it joined as a spare";
    else if (record.node_rank == 0)
      standing = "it takes part: the master runs there";
    else if (settings_.membership_settings.spares > 0)
      standing = "it takes part (every spare place was taken)";
    else
      standing = "it takes part (with --spares, it would be kept in reserve as the spare)";
    if (auto named = name_troubled_host(host, standing)) out.push_back(*named);
  }
  if (member && member->role == MemberRole::Spare) {
    out.push_back(Log{Severity::Info, fmt::format("host {} ({}) joined as a hot spare", host, record.observed_address)});
    out.push_back(TellMember{record.member_id,
                             fmt::format("the launcher on host {} is a hot spare of this job: it waits idle and takes the "
                                         "place of a node that is lost or excluded",
                                         host),
                             false});
  }
  Decisions changed = apply_membership_change(change);
  out.insert(out.end(), changed.begin(), changed.end());
  return out;
}

JobPolicy::Decisions JobPolicy::on_member_lost(const rendezvous::NodeRecord& record, const std::string& why,
                                               TimePoint now) {
  if (!membership_ || phase_ == JobPhase::Ended) return {};
  const Member* member = membership_->member(record.member_id);
  if (!member) return {};
  const MemberRole was = member->role;
  const int slot = member->slot;
  const std::string host = member->host;
  MembershipChange change = membership_->on_lost(record.member_id, why, now);
  if (was == MemberRole::Spare || (was == MemberRole::Active && slot < 0))
    return {Log{Severity::Info, fmt::format("the {} on host {} ({}) left: {}; nothing changes for the job",
                                            was == MemberRole::Spare ? "hot spare" : "launcher", host,
                                            record.observed_address, why)}};
  if (was != MemberRole::Active) return {};  // excluded (told to exit) or lost already
  const std::string what = fmt::format("node {} ({}, {}) was lost: {}", slot, host, record.observed_address, why);
  failures_.set_last_error(slot, what);
  Decisions out{Log{Severity::Error, what}};
  // A rank that failed as its peer vanished (a collective to a dead node) is the loss's doing:
  // when the loss can be repaired, the job goes on instead of stopping for that failure.
  const bool repairable =
      change.kind == MembershipChange::Kind::Replace || change.kind == MembershipChange::Kind::Resize;
  if (phase_ == JobPhase::Stopping && stopping_for_failure_ && repairable) {
    out.push_back(Log{Severity::Warn, fmt::format("the failure above came with the loss of node {}: repairing the "
                                                  "membership instead of stopping the job",
                                                  slot)});
    phase_ = JobPhase::Running;
  }
  if (change.kind == MembershipChange::Kind::Fail || phase_ == JobPhase::Stopping) {
    if (change.kind == MembershipChange::Kind::Fail) out.push_back(Log{Severity::Error, change.reason});
    if (phase_ != JobPhase::Stopping && phase_ != JobPhase::Joining) {
      Decisions stop = order_stop(1, change.kind == MembershipChange::Kind::Fail ? change.reason : what);
      out.insert(out.end(), stop.begin(), stop.end());
    }
    Decisions finished = finish_node(slot, NodeStanding::Lost, 1);
    out.insert(out.end(), finished.begin(), finished.end());
    return out;
  }
  Decisions changed = apply_membership_change(change);
  out.insert(out.end(), changed.begin(), changed.end());
  return out;
}

std::optional<Log> JobPolicy::name_troubled_host(const std::string& host, const std::string& standing) const {
  auto record = settings_.troubled_hosts.find(host);
  if (record == settings_.troubled_hosts.end()) return std::nullopt;
  return Log{Severity::Warn, fmt::format("{}: {} (the run history: `ddplaunch doctor` shows it)", record->second, standing)};
}

JobPolicy::Decisions JobPolicy::on_persistent_straggler(int node, int rank, double held_s, const std::string& what,
                                                        TimePoint now) {
  if (settings_.straggler_action != StragglerAction::RestartWithout || phase_ != JobPhase::Running ||
      held_s < settings_.straggler_swap_after_s || straggler_answered_ == generation_ ||
      tracker_.any_in_debugger())  // a person holds a rank: no restart under their feet
    return {};
  straggler_answered_ = generation_;
  const std::string reason =
      fmt::format("rank {} held the job back as a straggler for {} (straggler.action restart-without): {}", rank,
                  human_duration(held_s), what);
  MembershipChange change = membership_ ? membership_->on_straggler(node, reason, now) : MembershipChange{};
  if (change.kind == MembershipChange::Kind::None)
    return {Log{Severity::Warn, fmt::format("{} — but there is no spare to take node {}'s place, so the job goes on at "
                                            "its pace: start launchers with --spares to have one",
                                            reason, node)}};
  return apply_membership_change(change);
}

JobPolicy::Decisions JobPolicy::on_coordinator_moved() {
  if (!membership_) return {};
  first_generation_ = generation_.next();
  if (phase_ == JobPhase::Ended)  // the last coordinator ended the job and was lost before every node heard it
    return {Log{Severity::Warn, "took over a job that had already ended: every launcher that joins is told so"}};
  const Generation last = generation_;
  membership_.emplace(settings_.membership_settings);
  phase_ = JobPhase::Joining;
  nodes_.clear();
  failures_.new_generation();
  stopping_for_failure_ = false;
  init_deadline_.forget_armings();  // an init deadline armed by the last coordinator is not ours
  init_progress_.forget_announcement();
  probe_ = ProbeRound{};
  ++membership_restarts_;
  return {Log{Severity::Warn,
              fmt::format("took over as the job's coordinator after generation {} (restarts used: {} of {}): "
                          "waiting for the launchers to join again; generation {} starts with {} node(s)",
                          last, budget_.used(), budget_.total(), first_generation_,
                          settings_.membership_settings.min_nodes == settings_.membership_settings.max_nodes
                              ? fmt::format("{}", settings_.membership_settings.max_nodes)
                              : fmt::format("{} to {}", settings_.membership_settings.min_nodes,
                                            settings_.membership_settings.max_nodes))}};
}

JobPolicy::Decisions JobPolicy::apply_membership_change(const MembershipChange& change) {
  Decisions out;
  for (int id : change.excluded)
    out.push_back(TellMember{id, change.reason + " — this launcher exits; fix the host, then start it again to rejoin", true});
  switch (change.kind) {
    case MembershipChange::Kind::None: break;
    case MembershipChange::Kind::Start:
      out.push_back(Log{Severity::Info, fmt::format("membership: {}; starting generation {}", change.reason,
                                                    first_generation_)});
      out.push_back(BeginGeneration{first_generation_, membership_->active_ids(), nodes_.member_ids()});
      break;
    case MembershipChange::Kind::Replace:
    case MembershipChange::Kind::Resize:
    case MembershipChange::Kind::Wait: {
      Decisions restart = restart_for_membership(change.reason, change.kind == MembershipChange::Kind::Wait);
      out.insert(out.end(), restart.begin(), restart.end());
      break;
    }
    case MembershipChange::Kind::Fail: {
      out.push_back(Log{Severity::Error, "membership: " + change.reason});
      if (phase_ == JobPhase::Joining) {
        phase_ = JobPhase::Ended;
        out.push_back(AbortJoin{change.reason});
      } else if (phase_ != JobPhase::Stopping && phase_ != JobPhase::Ended) {
        Decisions stop = order_stop(1, change.reason);
        out.insert(out.end(), stop.begin(), stop.end());
      }
      break;
    }
  }
  return out;
}

// A new generation with the new set of nodes, at once: the change is not a failure of the
// program, so no backoff and no budget. `hold`: too few nodes — every node stops its workers
// and waits; the generation after it starts when a launcher fills the gap.
JobPolicy::Decisions JobPolicy::restart_for_membership(const std::string& reason, bool hold) {
  if (phase_ == JobPhase::Stopping || phase_ == JobPhase::Ended) return {};
  generation_ = generation_.next();
  ++membership_restarts_;
  phase_ = JobPhase::Rejoining;
  std::string text =
      hold ? fmt::format("membership: {}; the workers on every other node stop until a launcher joins", reason)
           : fmt::format("restarting the whole group on every node: generation {} (a membership change: no restart "
                         "budget spent), because {}",
                         generation_, reason);
  return {Log{Severity::Warn, std::move(text)},
          OrderRestart{generation_, reason, hold ? std::vector<int>{} : membership_->active_ids(), nodes_.member_ids(),
                       hold}};
}

}  // namespace ddplaunch
