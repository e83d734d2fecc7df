// HangInvestigation: what the master does about a silent rank, around the policy's pure
// HangWatch (which judges; this investigates and reports). The 1 s sweep's check turns a
// silent rank into a stack round, and one past the hang deadline into a hang for the policy
// (after its round); `ddplaunch stacks` starts rounds of its own. The run history is read
// when the master starts (it seeds the deadlines) and written at the job's end.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "master/coordinator_settings.h"
#include "master/master_timeline.h"
#include "master/stack_rounds.h"
#include "ddplaunch/rendezvous/generation.h"
#include "history/run_history.h"
#include "policy/hang_watch.h"
#include "policy/job_policy.h"
#include "policy/stacks_query.h"

namespace ddplaunch {

// Run history: what past runs of this job (same program, node count, interface) needed
// raises the init deadline and seeds the step interval. Read once per start: the file holds
// up to RunHistory::kMaxRecords lines.
HistorySeed load_history_seed(const CoordinatorSettings& settings);
void apply_history_seed(const HistorySeed& seed, PolicySettings& policy);
HangSettings hang_settings(const CoordinatorSettings& settings, const HistorySeed& seed);
// `ddplaunch doctor`: what the run history says of the hosts (lemon_hosts_section), for its
// table; doctor applies nothing of the history.
std::string doctor_host_record(const CoordinatorSettings& settings);

class HangInvestigation {
 public:
  // What the watch has its owner do; the watch reads the policy, never changes it.
  struct Hooks {
    StackRounds::AskNodes ask_nodes;  // a stack round's request to every node
    // A hang past its deadline, with the round's stacks: the owner asks JobPolicy::on_hang and
    // carries out what it decides.
    std::function<void(Generation generation, int rank, const std::string& detail)> hang_found;
  };

  // `policy` and `timeline` outlive the watch. `settings.save_state` (etcd) is where a learnt
  // step interval that grew enough is saved between decisions.
  HangInvestigation(boost::asio::io_context& io, CoordinatorSettings settings, const HistorySeed& seed,
                  const JobPolicy& policy, MasterTimeline& timeline, Hooks hooks);

  // `report_period`: how often the nodes report their ranks (policy/rank_report_period.h).
  void start_generation(Generation generation, int world, PolicyClock::duration report_period);
  void on_ranks_reported(Generation generation, const std::vector<RankReport>& ranks, PolicyClock::time_point now);
  // On the 1 s sweep while the job runs: suspects get a stack round, hangs a round then the policy.
  void check(PolicyClock::time_point now);
  // A node's answer to a stack round.
  void on_rank_stacks(int node_rank, const rendezvous::Message& message);
  // `ddplaunch stacks`: a new round ("pending <id>"), the running one joined, or a refusal;
  // "stacks <id>": "pending <id>", or "done" and the grouped stacks.
  std::string answer_stacks_query(const StacksRequest& request);

  // etcd: the largest step interval learnt travels with every save of the policy's state
  // (carried_state(), taken right before each save), and a save of its own follows when it grew
  // by more than kLearntGrowthSaved since the value last carried (on the 1 s sweep); a
  // coordinator that takes over seeds its own watch with the one it finds there. The interval
  // grows with step reports, which decide nothing, so no decision's save would carry it; it
  // only grows, 10 % at a time, so its own writes are bounded.
  static constexpr double kLearntGrowthSaved = 1.1;
  CarriedState carried_state();
  void save_learnt_step_interval();
  void seed_from_state(const CarriedState& carried);

  // For `ddplaunch status`: the deadlines in force and the action ("" before a plan).
  std::string status_text() const;
  const HangTracker& tracker() const { return hang_.tracker(); }

  // The job ended: pending stack rounds end, what this run measured is written to the history,
  // with the hosts that caused trouble in it (the lemon-host record).
  void finish(std::vector<HostTrouble> troubled_hosts = {});
  void close() { stack_rounds_.close(); }  // no stack round keeps the loop alive

 private:
  long request_stacks(std::string heading, std::vector<int> silent, StackRounds::Done done);

  CoordinatorSettings settings_;
  HangSettings started_with_;  // the history's seed applied
  const JobPolicy& policy_;
  MasterTimeline& timeline_;
  Hooks hooks_;
  HangWatch hang_;
  double carried_learnt_s_ = 0;  // the learnt step interval of the last state saved (or restored)
  StackRounds stack_rounds_;
  std::optional<long> last_requested_round_;  // the latest round `ddplaunch stacks` started
  PolicyClock::time_point last_requested_at_{};
  bool history_recorded_ = false;
};

}  // namespace ddplaunch
