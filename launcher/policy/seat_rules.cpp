// SeatRules: see seat_rules.h.
#include "policy/seat_rules.h"

#include <fmt/format.h>

#include "ddplaunch/rendezvous/printable.h"

namespace ddplaunch {

namespace {
std::string seconds_between(PolicyClock::time_point then, PolicyClock::time_point now) {
  return human_duration(std::chrono::duration<double>(now - then).count());
}
}  // namespace

std::string SeatRules::on_reachability(bool answers, const std::string& why, TimePoint now) {
  if (answers) {
    unanswered_since_.reset();
    return "etcd answers again";
  }
  stalled_ = true;
  // Said once no keepalive got through for a whole TTL: etcd went silent about then.
  if (!unanswered_since_) unanswered_since_ = now - ttl_;
  return fmt::format("etcd is unreachable ({}): the workers keep running; the job's state is saved once it answers",
                     why);
}

// etcd unreachable is not the end (it may have lost its quorum: no lease expires then); etcd
// saying the lease is gone is, unless it went while etcd did not answer (a stall).
std::variant<SeatRules::Lose, SeatRules::RegisterAgain> SeatRules::on_lease_lost(const std::string& why,
                                                                                  bool leading) {
  if (!stalled_) return Lose{"this launcher's etcd lease is lost (" + why + ")"};
  re_electing_ = leading;
  ++campaign_round_;  // a campaign still waiting with the old lease is stale
  return RegisterAgain{re_electing_};
}

SeatRules::Lose SeatRules::on_register_again_failed(const std::string& error) const {
  return Lose{"cannot register again in etcd after its stall: " + error};
}

SeatRules::Win SeatRules::on_campaign_won(int round, bool leading) {
  if (stopped_ || leading || round != campaign_round_) return Win::Stale;
  // A win right after etcd stalled may come from a key whose lease etcd is about to expire (at
  // resume it expires the overdue leases one by one, and the keys before this one may go
  // first): acted on only once the lease is proven alive.
  if (stalled_) return Win::ConfirmLeaseFirst;
  if (re_electing_) {
    re_electing_ = false;
    return Win::TakeSeatAgain;
  }
  return Win::TakeSeat;
}

// A lease that is gone is the lease keeper's to report (on_lease_lost).
SeatRules::Win SeatRules::on_lease_checked_after_win(int round, bool leading, bool alive) {
  if (stopped_ || leading || round != campaign_round_) return Win::Stale;
  if (!alive) return Win::LeaseExpired;
  stalled_ = false;  // this lease outlived the stall
  if (re_electing_) {
    re_electing_ = false;
    return Win::TakeSeatAgain;
  }
  return Win::TakeSeat;
}

bool SeatRules::on_campaign_failed(int round, bool leading) const {
  return !stopped_ && !leading && round == campaign_round_;
}

std::variant<std::monostate, SeatRules::Follow, SeatRules::Lose> SeatRules::on_leader_seen(const std::string& address,
                                                                                         std::int64_t revision) {
  if (re_electing_ && address != published_address_)
    return Lose{fmt::format("another launcher was elected coordinator (at {}) while this one's lease had expired in "
                            "etcd's stall: this coordinator stops acting",
                            rendezvous::printable(address))};
  if (revision < followed_revision_ || (revision == followed_revision_ && address == followed_address_)) return {};
  followed_revision_ = revision;
  followed_address_ = address;
  return Follow{address, revision};
}

// Fenced by a leader key that etcd's stall took: the state is kept for the key of the
// re-election (or dropped with the seat if another launcher is elected). Right after a stall,
// the failed compare may come before the lease keeper's report that the lease went with it:
// the lease decides (alive: another launcher really leads).
SeatRules::AfterWrite SeatRules::on_write_done(Write outcome) {
  if (ending_) return RemoveState{};
  const bool awaiting_key = (re_electing_ || stalled_) && outcome == Write::AnotherLeaderKey;
  if (outcome == Write::AnotherLeaderKey && !awaiting_key)
    return Lose{"another launcher leads the job now (this one's leader key is gone from etcd): this coordinator "
                "stops acting"};
  if (outcome == Write::Unanswered || awaiting_key) return RetryWrite{awaiting_key && !re_electing_};
  unanswered_since_.reset();
  return Written{};
}

std::optional<SeatRules::Lose> SeatRules::on_lease_of_failed_write(bool alive) const {
  if (stopped_ || re_electing_ || !alive) return std::nullopt;
  return Lose{"another launcher leads the job now (this one's leader key is gone from etcd, its lease is not): "
              "this coordinator stops acting"};
}

// Bounded: a coordinator cut off from etcd while a generation start waits for it ends once the
// first state that asked went unconfirmed for the bound, whatever each write and retry takes.
std::optional<SeatRules::TimePoint> SeatRules::on_confirmation_asked(TimePoint now) {
  if (confirm_asked_at_) return std::nullopt;
  confirm_asked_at_ = now;
  return now + confirm_bound_;
}

std::optional<SeatRules::Lose> SeatRules::on_confirm_deadline(TimePoint now, const std::string& last_error) const {
  if (stopped_ || !confirm_asked_at_) return std::nullopt;
  const std::string silent =
      unanswered_since_ ? fmt::format("; etcd has not answered its keepalives for about {}",
                                      seconds_between(*unanswered_since_, now))
                        : "";
  return Lose{fmt::format("etcd has not confirmed this coordinator's leadership for {} (the limit is join_timeout), "
                          "while a new generation waits for it{} (last error: {}): it may be the partitioned one, so "
                          "it stops acting",
                          seconds_between(*confirm_asked_at_, now), silent, last_error.empty() ? "none" : last_error)};
}

bool SeatRules::on_end_run(bool leading) {
  if (stopped_ || !leading) return false;
  ending_ = true;  // no state is written any more; one in flight is let finish first
  return true;
}

bool SeatRules::on_stop() {
  if (stopped_) return false;
  stopped_ = true;
  return true;
}

}  // namespace ddplaunch
