// RestartBudget: the job's two restart budgets and what one failure may spend of them:
// whether its kind restarts at all, which budget pays, the rule that the same rank failing
// alike in two generations in a row is deterministic, and the backoff before the restart.
// Pure: the backoff's jitter comes from its own seeded engine, saved with the job's state.
#pragma once

#include <optional>
#include <random>
#include <string>

#include "ddplaunch/rendezvous/generation.h"
#include "policy/failure.h"
#include "policy/hang_action.h"
#include "policy/restart_settings.h"

namespace ddplaunch {

template <class T>
struct StateFields;

// What a failure earns: a restart after a backoff, or the reason there is none.
struct RestartVerdict {
  bool restart = false;
  std::string refusal;   // why not, when !restart ("all 3 automatic init restarts ... used")
  double backoff_s = 0;  // the wait before the restart
  int budget = 0;        // the restarts a failure of this kind may spend in all ("restart 2 of 3")
};

class RestartBudget {
 public:
  // `hang_action`: a hang restarts only under HangAction::Restart.
  RestartBudget(RestartSettings settings, HangAction hang_action, unsigned random_seed);

  // Judges `failure` of `generation`; when it restarts, spends the budget that pays for it,
  // remembers it (for the deterministic-failure rule) and draws the backoff.
  RestartVerdict spend_on(const WorkerFailure& failure, Generation generation);

  int used() const { return init_restarts_used_ + any_restarts_used_; }
  int total() const { return settings_.init_restarts + settings_.max_restarts; }
  // "1 of 3 (automatic init restarts 1 of 3, --max-restarts 0 of 0)"
  std::string text() const;
  // Restarts after an init failure, whichever budget paid: each lengthens the init deadline.
  int init_failure_restarts() const { return init_failure_restarts_; }

 private:
  friend struct StateFields<RestartBudget>;  // the state document saves every field but the settings

  // The same rank failing with the same error in the same phase as the failure that caused
  // the last restart, one generation later.
  bool repeats_last_restart(const WorkerFailure& failure, Generation generation, const std::string& error) const;
  std::string refusal(const WorkerFailure& failure, Generation generation, bool kind_allowed, bool stop_repeat) const;
  double draw_backoff();

  RestartSettings settings_;
  HangAction hang_action_;
  std::mt19937 rng_;
  // Init failures spend init_restarts first, then max_restarts; any other failure max_restarts.
  int init_restarts_used_ = 0;
  int any_restarts_used_ = 0;
  int init_failure_restarts_ = 0;
  std::optional<RememberedFailure> previous_failure_;  // the failure that caused the last restart
};

}  // namespace ddplaunch
