// What the etcd backend keeps of a run, and how a launcher tells this run's from another's.
//
// The state key (/ddplaunch/<id>/state) holds the JobPolicy's document in an envelope that names
// the run which wrote it: a nonce the run's first coordinator draws and every assignment
// carries, so every launcher that took part in the run knows it. A coordinator elected later
// resumes only a state of its own run; another run's (the same --rdzv-id reused, a run that
// crashed before removing its keys, a forged document) is left behind and the job starts
// afresh — except that with a token, a failover never starts afresh over a state it cannot
// open (TakeOver::refusal). With a token, the envelope and the published coordinator address carry an HMAC that
// only a holder of the job's token can make, bound to the etcd key it is stored under. Pure:
// text in, text out.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ddplaunch {

struct SavedRun {
  std::string run;     // the run's nonce
  std::string policy;  // JobPolicy::save_state's document
};

// The state key's value for `saved` (sealed with `token` when there is one).
std::string seal_saved_run(const SavedRun& saved, std::string_view token, std::string_view key);

// A newly elected coordinator's reading of the state key: the run it carries on, the policy
// state to resume (none: the job starts afresh) and, when something was left behind, why.
// With a token, a launcher that took part in the run (a failover) does not start afresh over a
// state it cannot open (not sealed with the token, or not a state at all): that would reset the
// generation and the restart budgets at every failover. It refuses to coordinate instead, and
// its node ends saying why.
struct TakeOver {
  std::string run;
  std::optional<std::string> policy;
  std::string note;
  std::string refusal;  // not "": this launcher must not coordinate, and ends saying this
};
// `known_run`: the run this launcher took part in ("" when it never joined a coordinator);
// `new_run` draws a nonce when it has none.
TakeOver take_over_saved_run(const std::optional<std::string>& value, std::string_view known_run,
                             std::string_view token, std::string_view key,
                             const std::function<std::string()>& new_run);

// The coordinator's published address, sealed with the token when there is one
// ("HOST:PORT" alone without a token), and its check by the launchers that follow it: the
// address, or nullopt when the value was not sealed by a holder of the token for `key`.
std::string seal_coordinator_address(std::string_view address, std::string_view token, std::string_view key);
std::optional<std::string> open_coordinator_address(std::string_view value, std::string_view token,
                                                    std::string_view key);

}  // namespace ddplaunch
