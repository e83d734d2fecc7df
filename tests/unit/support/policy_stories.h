// Stories for the tests of the job policy's state document: scripts of events a job
// goes through — restarts, a stop, a hang, spares, exclusion, the last call, the wait below MIN,
// the peer probe, doctor — each step with its time, played on a policy with every decision
// kept as text (describe), so that two runs can be compared exactly.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "ddplaunch/preflight/ring_plan.h"
#include "policy/job_policy.h"
#include "policy_decisions.h"

namespace ddplaunch::testing {

using namespace std::chrono_literals;
using TimePoint = JobPolicy::TimePoint;
inline const TimePoint t0 = TimePoint{} + 1000s;  // where every story starts


struct Step {
  std::string what;
  PolicyClock::duration at;  // since t0
  std::function<JobPolicy::Decisions(JobPolicy&, TimePoint)> event;
};
using Script = std::vector<Step>;

inline rendezvous::NodeRecord node(int rank, int member_id = -1) {
  rendezvous::NodeRecord n;
  n.node_rank = rank;
  n.member_id = member_id;
  n.facts.nproc = 2;
  n.facts.hostname = "host" + std::to_string(member_id >= 0 ? member_id : rank);
  n.observed_address = "10.0.0." + std::to_string((member_id >= 0 ? member_id : rank) + 1);
  return n;
}

inline std::vector<rendezvous::NodeRecord> nodes(int count) {
  std::vector<rendezvous::NodeRecord> out;
  for (int i = 0; i < count; ++i) out.push_back(node(i));
  return out;
}

// Membership: the members by slot, as the server reports the generation the policy planned.
inline std::vector<rendezvous::NodeRecord> slots(const std::vector<int>& members) {
  std::vector<rendezvous::NodeRecord> out;
  for (std::size_t slot = 0; slot < members.size(); ++slot) out.push_back(node(static_cast<int>(slot), members[slot]));
  return out;
}

// Backoff with jitter: every restart's delay is drawn from the policy's random engine.
inline PolicySettings settings() {
  PolicySettings s;
  s.restart.init_restarts = 1;
  s.restart.max_restarts = 1;
  s.restart.backoff_s = 1;
  s.restart.jitter = 0.5;
  s.init_deadline.base_s = s.init_deadline.min_s = 10;
  s.init_deadline.per_node_s = s.init_deadline.rtt_factor = 0;
  s.init_deadline.restart_factor = 2;
  s.worker_master_addr = "10.0.0.1";
  s.random_seed = 7;
  return s;
}

inline PolicySettings membership_settings(int min_nodes, int max_nodes, int spares) {
  PolicySettings s = settings();
  testing::enable_membership(s, min_nodes, max_nodes, spares);
  s.membership_settings.exclude_cooldown_s = 20;
  return s;
}

// Generation 0: some ranks wait in init for one still in setup; the init deadline fires and
// restarts the group; generation 1 runs until a runtime failure spends --max-restarts;
// generation 2 fails beyond the budget and the job stops and ends.
inline Script restarts_then_stop() {
  return {
      {"the rendezvous port is known", 0s, [](JobPolicy& p, TimePoint) { return p.on_rendezvous_listening(29400); }},
      {"generation 0 joined", 0s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{0}, nodes(2), t); }},
      {"node 0's ranks in init", 1s,
       [](JobPolicy& p, TimePoint t) { return p.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Init, 1)}, t); }},
      {"rank 3 still in setup", 2s,
       [](JobPolicy& p, TimePoint t) { return p.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Init, 1), rank(3, RankPhase::Setup, 0)}, t); }},
      {"the wait is not reported yet", 29s, [](JobPolicy& p, TimePoint t) { return p.on_tick(t); }},
      {"the wait is reported", 30s, [](JobPolicy& p, TimePoint t) { return p.on_tick(t); }},
      {"rank 3 enters init: the deadline is armed", 32s,
       [](JobPolicy& p, TimePoint t) { return p.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Init, 1), rank(3, RankPhase::Init, 1)}, t); }},
      {"the init deadline passes", 42s, [](JobPolicy& p, TimePoint t) { return p.on_init_deadline(Generation{0}, 1, t); }},
      {"the backoff ends", 44s, [](JobPolicy& p, TimePoint) { return p.on_backoff_elapsed(Generation{1}); }},
      {"generation 1 joined", 45s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{1}, nodes(2), t); }},
      {"node 0's ranks run", 46s,
       [](JobPolicy& p, TimePoint t) { return p.on_ranks_reported(0, Generation{1}, {rank(0, RankPhase::Running, 1), rank(1, RankPhase::Running, 1)}, t); }},
      {"every rank runs", 47s,
       [](JobPolicy& p, TimePoint t) { return p.on_ranks_reported(1, Generation{1}, {rank(2, RankPhase::Running, 1), rank(3, RankPhase::Running, 1)}, t); }},
      {"rank 3 fails while running", 100s,
       [](JobPolicy& p, TimePoint t) { return p.on_worker_failed(1, Generation{1}, failure(1, 3, FailurePhase::Runtime), t); }},
      {"the backoff ends", 103s, [](JobPolicy& p, TimePoint) { return p.on_backoff_elapsed(Generation{2}); }},
      {"generation 2 joined", 104s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{2}, nodes(2), t); }},
      {"a worker's store client on the launcher's port", 110s,
       [](JobPolicy& p, TimePoint) { return p.on_foreign_store_client("10.0.0.2:40000", 29400); }},
      {"rank 1 fails: no budget left", 150s,
       [](JobPolicy& p, TimePoint t) { return p.on_worker_failed(0, Generation{2}, failure(0, 1, FailurePhase::Runtime, FailureKind::Exited, 7), t); }},
      {"node 0 finished", 151s, [](JobPolicy& p, TimePoint) { return p.on_node_finished(0, Generation{2}, 7); }},
      {"node 1 finished: the job ends", 152s, [](JobPolicy& p, TimePoint) { return p.on_node_finished(1, Generation{2}, 143); }},
      {"a late report after the end", 153s,
       [](JobPolicy& p, TimePoint t) { return p.on_ranks_reported(0, Generation{2}, {rank(0, RankPhase::Exited, 1)}, t); }},
  };
}

// The same rank failing the same way in init twice in a row is deterministic: the second time
// stops the job (the remembered failure decides). Init failures also grow the deadline.
inline Script deterministic_init_failure() {
  auto nccl = [] { return failure(1, 2, FailurePhase::Init, FailureKind::InitFailed, 1, "NCCL error: unhandled system error"); };
  return {
      {"generation 0 joined", 0s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{0}, nodes(2), t); }},
      {"rank 2 fails init", 5s, [nccl](JobPolicy& p, TimePoint t) { return p.on_worker_failed(1, Generation{0}, nccl(), t); }},
      {"the backoff ends", 7s, [](JobPolicy& p, TimePoint) { return p.on_backoff_elapsed(Generation{1}); }},
      {"generation 1 joined", 8s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{1}, nodes(2), t); }},
      {"rank 2 fails init the same way", 12s, [nccl](JobPolicy& p, TimePoint t) { return p.on_worker_failed(1, Generation{1}, nccl(), t); }},
      {"node 1 is lost while stopping", 13s, [](JobPolicy& p, TimePoint) { return p.on_node_lost(1, "connection reset"); }},
      {"node 0 finished: the job ends", 14s, [](JobPolicy& p, TimePoint) { return p.on_node_finished(0, Generation{1}, 1); }},
  };
}

// hang.action restart: the master's hang watch restarts the group once.
inline Script hang_restarts() {
  return {
      {"generation 0 joined", 0s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{0}, nodes(2), t); }},
      {"every rank runs", 3s,
       [](JobPolicy& p, TimePoint t) {
         JobPolicy::Decisions d = p.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Running, 1), rank(1, RankPhase::Running, 1)}, t);
         JobPolicy::Decisions e = p.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Running, 1), rank(3, RankPhase::Running, 1)}, t);
         d.insert(d.end(), e.begin(), e.end());
         return d;
       }},
      {"rank 1 hangs", 2000s, [](JobPolicy& p, TimePoint t) { return p.on_hang(Generation{0}, 1, "rank 1 made no progress for 30 min", t); }},
      {"the backoff ends", 2002s, [](JobPolicy& p, TimePoint) { return p.on_backoff_elapsed(Generation{1}); }},
      {"generation 1 joined", 2003s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{1}, nodes(2), t); }},
      {"rank 3 hangs too: no budget left", 4000s, [](JobPolicy& p, TimePoint t) { return p.on_hang(Generation{1}, 3, "rank 3 made no progress", t); }},
      {"node 0 finished", 4001s, [](JobPolicy& p, TimePoint) { return p.on_node_finished(0, Generation{1}, 1); }},
      {"node 1 finished: the job ends", 4002s, [](JobPolicy& p, TimePoint) { return p.on_node_finished(1, Generation{1}, 1); }},
  };
}

// The excluded host's launcher started again: a new connection (member id), the same host.
inline rendezvous::NodeRecord host2_again(int member_id) {
  rendezvous::NodeRecord n = node(-1, member_id);
  n.facts.hostname = "host2";
  n.observed_address = "10.0.0.3";
  return n;
}

// Fixed size 2 with one spare: the spare replaces a lost node; a node whose ranks fail init
// twice is excluded (a cooldown before its host may come back) and with no spare left the job
// waits below MIN until a launcher fills the gap.
inline Script spare_replaces_then_wait_below_min() {
  auto init_failed = [] { return failure(1, 2, FailurePhase::Init, FailureKind::InitFailed, 1, "NCCL error: unhandled system error"); };
  return {
      {"member 0 joined", 0s, [](JobPolicy& p, TimePoint t) { return p.on_member_joined(node(0, 0), t); }},
      {"member 2 asks for rank 2: a spare", 1s, [](JobPolicy& p, TimePoint t) { return p.on_member_joined(node(2, 2), t); }},
      {"member 1 joined: the job starts", 2s, [](JobPolicy& p, TimePoint t) { return p.on_member_joined(node(1, 1), t); }},
      {"generation 0 joined", 3s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{0}, slots({0, 1}), t); }},
      {"member 1 is lost: the spare takes slot 1", 10s,
       [](JobPolicy& p, TimePoint t) { return p.on_member_lost(node(1, 1), "heartbeat timeout", t); }},
      {"generation 1 joined with the spare", 12s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{1}, slots({0, 2}), t); }},
      {"slot 1's ranks fail init", 20s, [init_failed](JobPolicy& p, TimePoint t) { return p.on_worker_failed(1, Generation{1}, init_failed(), t); }},
      {"the backoff ends", 22s, [](JobPolicy& p, TimePoint) { return p.on_backoff_elapsed(Generation{2}); }},
      {"generation 2 joined", 23s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{2}, slots({0, 2}), t); }},
      {"member 3 joins as a spare", 24s, [](JobPolicy& p, TimePoint t) { return p.on_member_joined(node(-1, 3), t); }},
      {"slot 1's ranks fail init again: excluded, member 3 promoted", 30s,
       [init_failed](JobPolicy& p, TimePoint t) { return p.on_worker_failed(1, Generation{2}, init_failed(), t); }},
      {"generation 3 joined", 32s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{3}, slots({0, 3}), t); }},
      {"the excluded host comes back in its cooldown", 40s, [](JobPolicy& p, TimePoint t) { return p.on_member_joined(host2_again(4), t); }},
      {"member 3 is lost: no spare, below MIN, the job waits", 50s,
       [](JobPolicy& p, TimePoint t) { return p.on_member_lost(node(1, 3), "killed", t); }},
      {"still waiting", 70s, [](JobPolicy& p, TimePoint t) { return p.on_tick(t); }},
      {"the excluded host comes back after its cooldown and fills the gap", 75s,
       [](JobPolicy& p, TimePoint t) { return p.on_member_joined(host2_again(5), t); }},
      {"generation 5 joined", 76s,
       [](JobPolicy& p, TimePoint t) {
         auto generation = slots({0, 5});
         generation[1] = host2_again(5);
         generation[1].node_rank = 1;
         return p.on_nodes_joined(Generation{5}, generation, t);
       }},
      {"node 0 finished", 90s, [](JobPolicy& p, TimePoint) { return p.on_node_finished(0, Generation{5}, 0); }},
      {"node 1 finished: the job succeeded", 91s, [](JobPolicy& p, TimePoint) { return p.on_node_finished(1, Generation{5}, 0); }},
  };
}

// Elastic 2:3: the last call starts the job with MIN nodes; a launcher that joins later grows
// it; losses shrink it, and below MIN nobody comes: the wait ends the job.
inline Script elastic_last_call_then_below_min() {
  return {
      {"member 0 joined", 0s, [](JobPolicy& p, TimePoint t) { return p.on_member_joined(node(0, 0), t); }},
      {"member 1 joined: MIN is here, the last call runs", 1s, [](JobPolicy& p, TimePoint t) { return p.on_member_joined(node(-1, 1), t); }},
      {"the last call is not over", 5s, [](JobPolicy& p, TimePoint t) { return p.on_tick(t); }},
      {"the join timeout within the last call", 5s,
       [](JobPolicy& p, TimePoint) { return p.on_join_timeout("1 of 3 nodes missing", false); }},
      {"the last call is over: the job starts", 6s, [](JobPolicy& p, TimePoint t) { return p.on_tick(t); }},
      {"generation 0 joined", 7s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{0}, slots({0, 1}), t); }},
      {"member 2 joins: the job grows", 20s, [](JobPolicy& p, TimePoint t) { return p.on_member_joined(node(-1, 2), t); }},
      {"generation 1 joined", 21s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{1}, slots({0, 1, 2}), t); }},
      {"member 2 is lost: the job shrinks", 30s, [](JobPolicy& p, TimePoint t) { return p.on_member_lost(node(2, 2), "killed", t); }},
      {"generation 2 joined", 31s, [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{2}, slots({0, 1}), t); }},
      {"member 1 is lost: below MIN, the job waits", 40s, [](JobPolicy& p, TimePoint t) { return p.on_member_lost(node(1, 1), "killed", t); }},
      {"the wait is not over", 69s, [](JobPolicy& p, TimePoint t) { return p.on_tick(t); }},
      {"the wait is over: the job stops", 70s, [](JobPolicy& p, TimePoint t) { return p.on_tick(t); }},
      {"node 0 finished: the job ends", 71s, [](JobPolicy& p, TimePoint) { return p.on_node_finished(0, Generation{3}, 1); }},
  };
}

// doctor with the peer probe: one node's probe results never come; the round's deadline ends
// it with the links that came, and doctor's table shows them.
inline std::vector<rendezvous::NodeRecord> probing_nodes() {
  auto out = nodes(2);
  for (auto& n : out)
    n.facts.probe_endpoints = preflight::encode_endpoints(
        {{"eth0", n.observed_address, 41000 + n.node_rank, "abc" + std::to_string(n.node_rank)}});
  return out;
}

inline Script doctor_with_a_probe() {
  preflight::ProbedLink link;
  link.pair = {0, 1};
  link.ifname = "eth0";
  link.from_address = "10.0.0.1";
  link.to_endpoint = "10.0.0.2:41001";
  link.result = {true, "", 0.25, 941.5, "10.0.0.1"};
  return {
      {"generation 0 joined: the probe round begins", 0s,
       [](JobPolicy& p, TimePoint t) { return p.on_nodes_joined(Generation{0}, probing_nodes(), t); }},
      {"the worker port is chosen", 0s, [](JobPolicy& p, TimePoint) { return p.on_generation_planned(Generation{0}, 29500); }},
      {"node 0's links", 3s, [link](JobPolicy& p, TimePoint) { return p.on_probe_results(0, Generation{0}, {link}); }},
      {"the round is not overdue", 14s, [](JobPolicy& p, TimePoint t) { return p.on_tick(t); }},
      {"the round is overdue: the verdict from the links in", 15s, [](JobPolicy& p, TimePoint t) { return p.on_tick(t); }},
      {"node 0's doctor report", 16s, [](JobPolicy& p, TimePoint) { return p.on_doctor_report(0, true, "eth0", ""); }},
      {"node 1's doctor report: the table", 17s,
       [](JobPolicy& p, TimePoint) { return p.on_doctor_report(1, false, "eth0", "NCCL 2.18 differs"); }},
  };
}

inline PolicySettings doctor_settings() {
  PolicySettings s = settings();
  s.doctor = true;
  return s;
}

inline PolicySettings hang_settings() {
  PolicySettings s = settings();
  s.hang_action = HangAction::Restart;
  return s;
}

// ---- playing them ----------------------------------------------------------------------------

// Steps [from, to) of `script` on `policy`, on a machine whose clock reads `shift` more than
// t0's; every decision as text.
inline std::vector<std::string> play(JobPolicy& policy, const Script& script, std::size_t from, std::size_t to,
                                     PolicyClock::duration shift = {}) {
  std::vector<std::string> decided;
  for (std::size_t i = from; i < to; ++i)
    for (const auto& d : script[i].event(policy, t0 + script[i].at + shift))
      decided.push_back(script[i].what + ": " + describe(d));
  return decided;
}

inline std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

inline bool has(const std::vector<std::string>& decided, const std::string& text) {
  return std::any_of(decided.begin(), decided.end(), [&](const std::string& d) { return d.find(text) != std::string::npos; });
}

// A policy mid-job with something in most fields: mid restart in membership mode.
inline JobPolicy policy_mid_membership_restart() {
  const Script script = spare_replaces_then_wait_below_min();
  JobPolicy policy(membership_settings(2, 2, 1));
  play(policy, script, 0, 11);  // after the exclusion: a cooldown, failures remembered, a restart ordered
  return policy;
}

}  // namespace ddplaunch::testing
