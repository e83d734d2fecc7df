// SeatRules: when a launcher's etcd seat (EtcdSeat, --rdzv-backend etcd) keeps its place,
// registers again, takes the coordinator's seat, or loses it. Events in (what etcd answered,
// with the time passed in), decisions out; no clock, no sockets, no etcd client: EtcdSeat sends
// the requests and carries the decisions out.
//
// The rules, in short:
//   - a lease etcd says is gone ends the seat, unless etcd stalled during it (an fsync, a
//     paused VM: every launcher's lease went at once): then the launcher registers again,
//     the sitting coordinator campaigning at once, the others after a pause;
//   - a won election is acted on only while current (no later lease, no leader already), and
//     after a stall only once the lease proves alive; the coordinator that campaigned again
//     goes on as itself;
//   - while re-electing, etcd naming another address as coordinator ends the seat (superseded);
//     a coordinator of an older revision, or the same one again, is not followed;
//   - a fenced state write that finds another leader key ends the seat, unless the key may be
//     one that etcd's stall took (then the lease decides: alive means another launcher leads);
//   - a generation start waits for etcd's confirmation for the confirm bound at most, then the
//     seat is lost (the coordinator may be the partitioned one).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "policy/init_tracker.h"  // PolicyClock

namespace ddplaunch {

class SeatRules {
 public:
  using TimePoint = PolicyClock::time_point;

  // The seat is lost: the launcher stops acting and says why.
  struct Lose {
    std::string why;
  };
  // The lease expired in etcd's stall: register again with a new lease, then campaign; at once
  // when this launcher was the coordinator (its new key is the lowest: it is elected again),
  // else after kFollowerCampaignPause, so that a successor is elected only if it is gone.
  struct RegisterAgain {
    bool re_electing = false;
  };
  static constexpr std::chrono::seconds kFollowerCampaignPause{1};

  // What to do with a won election.
  enum class Win {
    Stale,              // an earlier lease's campaign, or leading already: nothing
    ConfirmLeaseFirst,  // right after a stall: ask etcd whether this lease is alive first
    LeaseExpired,       // the lease did not outlive the stall: not acted on (said once)
    TakeSeat,           // the job's coordinator: load the state, host it
    TakeSeatAgain,      // the sitting coordinator elected again after the stall: it goes on
  };

  // The coordinator etcd names, followed (a newer revision, or a new address).
  struct Follow {
    std::string address;
    std::int64_t revision = 0;
  };

  // A fenced state write's outcome, and what follows it.
  enum class Write { Written, Unanswered, AnotherLeaderKey };
  struct RemoveState {};        // the run ended meanwhile: the fenced removal, then stop
  struct RetryWrite {           // after a pause, the latest state first
    bool check_lease = false;   // and ask whether the lease is alive (LeaseOfFailedWrite)
  };
  struct Written {};            // confirms the states that asked
  using AfterWrite = std::variant<Written, RetryWrite, RemoveState, Lose>;

  // `ttl`: the lease's; `confirm_bound`: how long a generation start waits for etcd's
  // confirmation (join_timeout).
  SeatRules(std::chrono::seconds ttl, std::chrono::milliseconds confirm_bound)
      : ttl_(ttl), confirm_bound_(confirm_bound) {}

  // ---- the lease --------------------------------------------------------------------------
  // A lease was granted and this launcher registered with it: nothing of the old lease's
  // stall counts any more.
  void on_registered() { stalled_ = false; }
  // The lease keeper: etcd stopped answering (`answers` false) or answers again. Returns the
  // sentence to say (a warning when it stopped).
  std::string on_reachability(bool answers, const std::string& why, TimePoint now);
  // etcd says the lease is gone; `leading`: this launcher holds the leader key.
  std::variant<Lose, RegisterAgain> on_lease_lost(const std::string& why, bool leading);
  Lose on_register_again_failed(const std::string& error) const;

  // ---- the election -----------------------------------------------------------------------
  // Each registration after a stall starts a new round: a campaign of an earlier one is stale.
  int campaign_round() const { return campaign_round_; }
  Win on_campaign_won(int round, bool leading);
  // After Win::ConfirmLeaseFirst: etcd's answer on the lease (`alive`: a TTL above 0).
  Win on_lease_checked_after_win(int round, bool leading, bool alive);
  // A failed campaign: campaign again after a pause (false: a stale or stopped one, nothing).
  bool on_campaign_failed(int round, bool leading) const;
  // Elected (or again): etcd names this address for the coordinator this launcher hosts.
  void on_published(const std::string& address) { published_address_ = address; }
  const std::string& published_address() const { return published_address_; }
  // etcd names `address` (sealed right) as the coordinator, elected at `revision`.
  std::variant<std::monostate, Follow, Lose> on_leader_seen(const std::string& address, std::int64_t revision);
  const std::string& followed_address() const { return followed_address_; }

  // ---- the state writes -------------------------------------------------------------------
  // A state is kept for writing only while this launcher leads or campaigns to lead again.
  bool keeps_state(bool leading) const { return !stopped_ && !ending_ && (leading || re_electing_); }
  AfterWrite on_write_done(Write outcome);
  // After RetryWrite{check_lease}: the lease of the write that found another key is alive
  // (`alive`: the same lease, a TTL above 0).
  std::optional<Lose> on_lease_of_failed_write(bool alive) const;
  // A generation start asked for a confirmation: when to give up on it (nullopt: one waits
  // already, its deadline stands).
  std::optional<TimePoint> on_confirmation_asked(TimePoint now);
  // Every confirmation asked for came: nothing waits (the shell cancels its deadline).
  void on_all_confirmed() { confirm_asked_at_.reset(); }
  // The confirm deadline passed; `last_error`: etcd's last answer, for the person.
  std::optional<Lose> on_confirm_deadline(TimePoint now, const std::string& last_error) const;

  // ---- the end ----------------------------------------------------------------------------
  // The job ended under this coordinator: true when the state is to be removed (fenced) before
  // stopping, false: stop at once (not leading, or stopped already).
  bool on_end_run(bool leading);
  // The seat stops (lost, or the end): true the first time only.
  bool on_stop();
  bool stopped() const { return stopped_; }
  bool ending() const { return ending_; }
  bool re_electing() const { return re_electing_; }

 private:
  std::chrono::seconds ttl_;
  std::chrono::milliseconds confirm_bound_;
  bool stalled_ = false;      // etcd did not answer at some point of the current lease
  bool re_electing_ = false;  // the coordinator, campaigning again after a stall took its lease
  int campaign_round_ = 0;
  std::string published_address_;  // where this launcher's coordinator listens, once published
  std::string followed_address_;   // the last coordinator followed
  std::int64_t followed_revision_ = 0;
  std::optional<TimePoint> unanswered_since_;  // etcd's keepalives fail since about then
  std::optional<TimePoint> confirm_asked_at_;  // while a generation start waits
  bool ending_ = false;
  bool stopped_ = false;
};

}  // namespace ddplaunch
