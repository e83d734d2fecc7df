// RestartBudget: see restart_budget.h. Only a failure inside init spends the automatic init
// budget; a program's own error (in setup, or an exception of its making inside init)
// restarts like a runtime failure, only with --max-restarts (DESIGN.md "Phases of a worker").
#include "policy/restart_budget.h"

#include <algorithm>

#include <fmt/format.h>

#include "ddplaunch/base/small_math.h"
#include "ddplaunch/rendezvous/generation_format.h"
#include "policy/program_error.h"

namespace ddplaunch {

RestartBudget::RestartBudget(RestartSettings settings, HangAction hang_action, unsigned random_seed)
    : settings_(settings), hang_action_(hang_action), rng_(random_seed) {}

RestartVerdict RestartBudget::spend_on(const WorkerFailure& f, Generation generation) {
  const RestartSettings& r = settings_;
  const bool init = is_init_failure(f);
  const bool kind_allowed = f.kind != FailureKind::SpawnFailed &&
                            (init ? r.on_init_failure : r.on_runtime_failure) &&
                            (f.kind != FailureKind::Hang || hang_action_ == HangAction::Restart);
  const bool from_init_budget = init && init_restarts_used_ < r.init_restarts;
  const bool from_any_budget = any_restarts_used_ < r.max_restarts;
  // A deterministic failure: the automatic budget does not retry it blindly.
  const std::string this_error = error_line(f);
  const bool stop_repeat = repeats_last_restart(f, generation, this_error) && r.max_restarts == 0 && from_init_budget;
  if (!kind_allowed || !(from_init_budget || from_any_budget) || stop_repeat)
    return {false, refusal(f, generation, kind_allowed, stop_repeat), 0, 0};
  if (from_init_budget) ++init_restarts_used_;
  else ++any_restarts_used_;
  if (init) ++init_failure_restarts_;
  previous_failure_ = RememberedFailure{generation, f.global_rank, f.phase, this_error};
  return {true, "", draw_backoff(), (init ? r.init_restarts : 0) + r.max_restarts};
}

bool RestartBudget::repeats_last_restart(const WorkerFailure& f, Generation generation,
                                         const std::string& error) const {
  return previous_failure_ && previous_failure_->rank == f.global_rank && previous_failure_->phase == f.phase &&
         previous_failure_->generation.next() == generation && !error.empty() && previous_failure_->error == error &&
         f.kind != FailureKind::InitTimeout && f.kind != FailureKind::Hang;
}

std::string RestartBudget::refusal(const WorkerFailure& f, Generation generation, bool kind_allowed,
                                   bool stop_repeat) const {
  const RestartSettings& r = settings_;
  const bool init = is_init_failure(f);
  const bool program_error_in_init = f.phase == FailurePhase::Init && !init && f.kind != FailureKind::SpawnFailed &&
                                     f.kind != FailureKind::Hang;
  if (f.kind == FailureKind::SpawnFailed) return "the program could not be started (not restartable)";
  if (f.kind == FailureKind::Hang && hang_action_ != HangAction::Restart)
    return "hang.action is stop (auto without --max-restarts); --hang-action restart restarts";
  if (!kind_allowed) return fmt::format("restart.restart_on does not include {}", init ? "init" : "runtime");
  if (stop_repeat)
    return fmt::format("rank {} failed with the same error during {} in generations {} and {} ({}): it is "
                       "deterministic, another attempt would fail alike; --max-restarts N retries it anyway",
                       f.global_rank, failure_phase_name(f.phase), previous_failure_->generation, generation,
                       error_line(f));
  if (init)
    return fmt::format("all {} automatic init restarts and all {} --max-restarts used", r.init_restarts,
                       r.max_restarts);
  if (f.phase == FailurePhase::Setup || program_error_in_init)
    return fmt::format("the program failed with its own error during {} (not an init failure: no automatic "
                       "restart); {} --max-restarts used of {}",
                       failure_phase_name(f.phase), any_restarts_used_, r.max_restarts);
  return fmt::format("all {} --max-restarts used (runtime failures restart only with --max-restarts)", r.max_restarts);
}

// backoff_s * 2^(n-1) for the n-th restart, capped, plus up to `jitter` of it at random.
double RestartBudget::draw_backoff() {
  double delay = std::min(settings_.backoff_max_s, settings_.backoff_s * integer_power(2.0, used() - 1));
  if (delay > 0 && settings_.jitter > 0) delay += std::uniform_real_distribution<double>(0, delay * settings_.jitter)(rng_);
  return delay;
}

std::string RestartBudget::text() const {
  return fmt::format("{} of {} (automatic init restarts {} of {}, --max-restarts {} of {})", used(), total(),
                     init_restarts_used_, settings_.init_restarts, any_restarts_used_, settings_.max_restarts);
}

}  // namespace ddplaunch
