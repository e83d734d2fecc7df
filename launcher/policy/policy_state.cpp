// JobPolicy's state document: the policy's own fields, the version and settings checks; the
// parts' fields are in part_state.h and record_state.h, the JSON mechanics in state_io.h.
#include "policy/policy_state.h"

#include <fmt/format.h>

#include "policy/part_state.h"
#include "policy/state_io.h"

namespace ddplaunch {

// Every field of JobPolicy but settings_ (see policy_state.h); the fields of the parts that
// are no objects of the document are listed in its top level (part_state.h).
template <>
struct StateFields<JobPolicy> {
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("phase", p.phase_);
    io("generation", p.generation_);
    StateFields<PlannedNodes>::list(io, p.nodes_);
    io("tracker", p.tracker_);
    StateFields<InitProgress>::list(io, p.init_progress_);
    StateFields<InitDeadline>::list(io, p.init_deadline_);
    StateFields<RestartBudget>::list(io, p.budget_);
    // The shell tells both ports again where they changed (on_generation_planned,
    // on_rendezvous_listening): the workers still use the saved worker port; the new
    // coordinator's rendezvous port is its own.
    StateFields<JobFailures>::list(io, p.failures_);
    io("worker_port", p.worker_port_);
    io("restart_reason", p.restart_reason_);
    io("stop_exit_code", p.stop_exit_code_);
    io("stopping_for_failure", p.stopping_for_failure_);
    io("doctor_rows", p.doctor_rows_);
    io("probe", p.probe_);
    io("probe_summary", p.probe_summary_);
    io("probe_refusal", p.probe_refusal_);
    io("membership", p.membership_);
    io("membership_restarts", p.membership_restarts_);
    io("first_generation", p.first_generation_);
    io("straggler_answered", p.straggler_answered_);
  }
};

// What the shell's parts carry along (CarriedState), in the document's top level.
template <>
struct StateFields<CarriedState> {
  template <class Io, class Self>
  static void list(Io& io, Self& c) {
    io("learnt_step_interval_s", c.learnt_step_interval_s);
  }
};

namespace {
// What a document says of itself, read before the rest: its version, and the fingerprint of
// the settings it was saved under (policy_settings_fingerprint).
struct DocumentStamp {
  int version = 0;
  std::string settings;
};
}  // namespace

template <>
struct StateFields<DocumentStamp> {
  template <class Io, class Self>
  static void list(Io& io, Self& s) {
    io("version", s.version);
    io("settings", s.settings);
  }
};

std::string policy_settings_fingerprint(const PolicySettings& settings) {
  const MembershipSettings& m = settings.membership_settings;
  return fmt::format("init_restarts {}, max_restarts {}, {}", settings.restart.init_restarts,
                     settings.restart.max_restarts,
                     settings.membership ? fmt::format("nodes {}:{}, spares {}", m.min_nodes, m.max_nodes, m.spares)
                                         : std::string("membership off"));
}

std::string JobPolicy::save_state(TimePoint now, const CarriedState& carried) const {
  StateWriter document(now);
  const DocumentStamp stamp{kPolicyStateVersion, policy_settings_fingerprint(settings_)};
  StateFields<DocumentStamp>::list(document, stamp);
  StateFields<JobPolicy>::list(document, *this);
  StateFields<CarriedState>::list(document, carried);
  return std::move(document).take().dump();
}

Result<RestoredPolicy> JobPolicy::restore_state(PolicySettings settings, std::string_view json, TimePoint now) {
  auto refuse = [](const std::string& why) {
    return Result<RestoredPolicy>::failure("cannot restore the job's policy state: " + why);
  };
  StateJson document;
  try {  // nlohmann says where the text stops being JSON only in its exception
    document = StateJson::parse(json);
  } catch (const StateJson::exception& e) {
    return refuse(fmt::format("the document is not JSON ({})", e.what()));
  }
  if (!document.is_object()) return refuse("the document is not a JSON object");

  std::string error;
  StateReader reader(document, "", now, &error);
  // A version that cannot be read stays ours here, so that the reader's own error is the one
  // reported; one read and not ours is refused before anything else is looked at.
  DocumentStamp stamp{kPolicyStateVersion, ""};
  StateFields<DocumentStamp>::list(reader, stamp);
  if (stamp.version != kPolicyStateVersion)
    return refuse(fmt::format("the document is version {}, this launcher reads version {} only: run the same "
                              "ddplaunch version on every launcher of the job",
                              stamp.version, kPolicyStateVersion));
  const std::string ours = policy_settings_fingerprint(settings);
  if (error.empty() && stamp.settings != ours)
    return refuse(fmt::format("it was saved under other settings ({}) than this launcher's ({}), so the budgets "
                              "spent and the membership would mean something else here: start every launcher of "
                              "the job with the same --init-restarts, --max-restarts, --nodes MIN:MAX and --spares",
                              stamp.settings, ours));
  RestoredPolicy restored{JobPolicy(std::move(settings)), {}};
  StateFields<JobPolicy>::list(reader, restored.policy);
  StateFields<CarriedState>::list(reader, restored.carried);
  if (!error.empty()) return refuse(error);
  if (restored.policy.membership_.has_value() != restored.policy.settings_.membership)
    return refuse("'membership' does not match the document's own settings fingerprint (a damaged document)");
  return Result<RestoredPolicy>::success(std::move(restored));
}

}  // namespace ddplaunch
