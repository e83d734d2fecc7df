// EtcdSeat: registration, the coordinator's election, following the leader, fenced state
// writes (etcd_seat.h). When the seat is kept, renewed or lost is SeatRules' to say; this file
// asks etcd and carries the rules' decisions out. Every wait is bounded: etcd requests by the
// client's timeouts, a campaign by kCampaignWait (then it campaigns again), a broken watch by
// its reconnect bound (then the seat is lost), the lease by its TTL (LeaseKeeper).
#include "seat/etcd_seat.h"

#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "ddplaunch/base/overloaded.h"
#include "ddplaunch/base/small_math.h"
#include "ddplaunch/base/time_units.h"
#include "ddplaunch/rendezvous/printable.h"
#include "ddplaunch/rendezvous/token_proof.h"
#include "seat/saved_run.h"

namespace ddplaunch {

namespace {
// A campaign request waits at most this long for leadership, then is sent again (etcd keeps
// the candidacy: it is the same lease's key).
constexpr std::chrono::minutes kCampaignWait{10};
// A failed campaign, leader read or state write is tried again after this pause.
constexpr std::chrono::milliseconds kRetryPause{500};

std::string hex(std::int64_t id) { return fmt::format("{:x}", static_cast<std::uint64_t>(id)); }
}  // namespace

Result<std::unique_ptr<EtcdSeat>> EtcdSeat::create(boost::asio::io_context& io, const LaunchConfig& config,
                                                   std::string hostname) {
  auto client = etcd_job_client(io, config);
  if (!client) return Result<std::unique_ptr<EtcdSeat>>::failure(client.error);
  return Result<std::unique_ptr<EtcdSeat>>::success(
      std::unique_ptr<EtcdSeat>(new EtcdSeat(io, *client, config, std::move(hostname))));
}

EtcdSeat::EtcdSeat(boost::asio::io_context& io, std::shared_ptr<etcd::Client> client, const LaunchConfig& config,
                   std::string hostname)
    : io_(io),
      client_(std::move(client)),
      prefix_(etcd_job_prefix(config.job_id)),
      election_(etcd_election_key(config.job_id)),
      hostname_(std::move(hostname)),
      token_(config.token),
      ttl_(std::max<long>(1, static_cast<long>(round_half_away(config.etcd.lease_ttl_s)))),
      rules_(ttl_, seconds_to_ms(config.join_timeout_s)),
      confirm_timer_(io),
      retry_(io),
      write_retry_(io),
      watch_retry_(io) {}

EtcdSeat::~EtcdSeat() {
  *alive_ = false;
  stop();
}

void EtcdSeat::start(SeatCallbacks callbacks, std::function<void(const std::string& error)> started) {
  callbacks_ = std::move(callbacks);
  register_seat([this, started](const std::string& error) {
    if (!error.empty()) return started(error);
    spdlog::info("registered in etcd under {} (lease {}, TTL {} s); campaigning for the coordinator", prefix_,
                 hex(lease_.id), ttl_.count());
    started("");
    follow();
    campaign();
  });
}

// A lease, its keepalives, and this launcher's record under launchers/ bound to it.
void EtcdSeat::register_seat(std::function<void(const std::string& error)> registered) {
  client_->grant_lease(ttl_, [this, alive = alive_, registered](Result<etcd::LeaseGrant> grant) {
    if (!*alive || rules_.stopped()) return;
    if (!grant) return registered("the coordinator's etcd: " + grant.error);
    lease_ = *grant;
    rules_.on_registered();
    keeper_ = etcd::LeaseKeeper::start_tolerant(
        client_, lease_,
        [this, alive, lease = lease_.id](const std::string& why) {
          if (!*alive || lease != lease_.id) return;
          std::visit(Overloaded{[this](const SeatRules::Lose& lost) { lose(lost.why); },
                                [this, &why](const SeatRules::RegisterAgain& again) { renew_after_stall(why, again); }},
                     rules_.on_lease_lost(why, leader_.has_value()));
        },
        [this, alive](const std::string& why) {
          if (!*alive) return;
          unreachable_ = why;
          const std::string said = rules_.on_reachability(why.empty(), why, PolicyClock::now());
          if (callbacks_.on_reachability) callbacks_.on_reachability(why);
          if (why.empty()) spdlog::info("{}", said);
          else spdlog::warn("{}", said);
        });
    const std::string record = fmt::format(R"({{"host":"{}","pid":{}}})", hostname_, ::getpid());
    client_->put(prefix_ + "launchers/" + hex(lease_.id), record, lease_.id,
                 [this, alive, registered](Result<etcd::Revision> put) {
                   if (!*alive || rules_.stopped()) return;
                   if (!put) return registered("registering this launcher in etcd: " + put.error);
                   registered("");
                 });
  });
}

// The lease expired while etcd did not answer (etcd stalled longer than the TTL: an fsync, a
// paused VM): every launcher's lease went at once, not this launcher alone. Its connections to
// the coordinator are what tell whether the job is whole, so it registers again with a new
// lease and campaigns again; the sitting coordinator at once (its new key is the lowest: it is
// elected again and goes on, stamping orders with its new revision), the others after a pause,
// so that they elect a successor only if the coordinator is gone.
void EtcdSeat::renew_after_stall(const std::string& why, SeatRules::RegisterAgain again) {
  if (keeper_) keeper_->stop();
  leader_.reset();
  spdlog::warn("this launcher's etcd lease expired while etcd did not answer ({}): registering again with a new "
               "lease{}; the workers keep running",
               why, again.re_electing ? " and campaigning to stay the job's coordinator" : "");
  register_seat([this, again](const std::string& error) {
    if (!error.empty()) return lose(rules_.on_register_again_failed(error).why);
    spdlog::info("registered in etcd again (lease {})", hex(lease_.id));
    if (again.re_electing) return campaign();
    retry_.expires_after(SeatRules::kFollowerCampaignPause);
    retry_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
      if (!ec && *alive) campaign();
    });
  });
}

void EtcdSeat::campaign() {
  if (rules_.stopped()) return;
  client_->campaign(election_, "", lease_.id, kCampaignWait, cancel_,
                    [this, alive = alive_, round = rules_.campaign_round()](Result<etcd::LeaderKey> won) {
    if (!*alive) return;
    if (won) return act_on_win(rules_.on_campaign_won(round, leader_.has_value()), *won, round);
    if (!rules_.on_campaign_failed(round, leader_.has_value())) return;
    last_error_ = won.error;
    retry_.expires_after(kRetryPause);
    retry_.async_wait([this, alive, round](const boost::system::error_code& ec) {
      if (!ec && *alive && round == rules_.campaign_round()) campaign();
    });
  });
}

void EtcdSeat::act_on_win(SeatRules::Win win, const etcd::LeaderKey& key, int round) {
  switch (win) {
    case SeatRules::Win::Stale: return;
    case SeatRules::Win::ConfirmLeaseFirst:
      client_->keep_alive_once(lease_.id, [this, alive = alive_, key, round](Result<std::int64_t> ttl) {
        if (*alive) act_on_win(rules_.on_lease_checked_after_win(round, leader_.has_value(), ttl && *ttl > 0), key, round);
      });
      return;
    case SeatRules::Win::LeaseExpired:
      spdlog::info("won the coordinator's election with a lease that expired in etcd's stall: not acting on it");
      return;
    case SeatRules::Win::TakeSeat: return on_won(key);
    case SeatRules::Win::TakeSeatAgain: return on_won_again(key);
  }
}

// The sitting coordinator, elected again after etcd's stall: the same coordinator goes on.
void EtcdSeat::on_won_again(etcd::LeaderKey key) {
  leader_ = key;
  spdlog::info("elected the job's coordinator again (election revision {}) after etcd's stall: the job goes on",
               key.rev);
  if (callbacks_.on_reelected) callbacks_.on_reelected(key.rev);
  const std::string address = rules_.published_address();
  publish(address);
  write_state();  // what was decided meanwhile waited for the new leader key
}

void EtcdSeat::on_won(etcd::LeaderKey key) {
  leader_ = key;
  spdlog::info("elected the job's coordinator (election revision {}): loading the job's state from etcd", key.rev);
  client_->get(prefix_ + "state", [this, alive = alive_](Result<etcd::RangeResult> state) {
    if (!*alive || rules_.stopped()) return;
    if (!state) return lose("cannot read the job's state from etcd after winning the election: " + state.error);
    std::optional<std::string> value;
    if (!state->kvs.empty()) value = state->kvs.front().value;
    TakeOver take_over = take_over_saved_run(value, known_run_, token_, prefix_ + "state",
                                             [] { return rendezvous::random_nonce().substr(0, 32); });
    if (!take_over.refusal.empty()) return lose(take_over.refusal);
    if (!take_over.note.empty()) spdlog::warn("{}", take_over.note);
    run_ = std::move(take_over.run);
    callbacks_.on_elected(std::move(take_over.policy));
  });
}

void EtcdSeat::publish(const std::string& address) {
  if (!leader_) return;
  rules_.on_published(address);
  client_->proclaim(*leader_, seal_coordinator_address(address, token_, leader_->key), [this, alive = alive_, address](Result<etcd::Revision> done) {
    if (!*alive || rules_.stopped()) return;
    if (!done) return lose("cannot publish the coordinator's address " + address + " in etcd: " + done.error);
    spdlog::info("the coordinator listens on {} (published in etcd)", address);
  });
}

// Who leads: read at start and after every change under the election's keys.
void EtcdSeat::follow() {
  watch_ = etcd::PrefixWatch::start(
      client_, election_ + "/", 0,
      [this, alive = alive_](const std::vector<etcd::WatchEvent>&, etcd::Revision) {
        if (*alive) read_leader();
      },
      // A watch that gives up (etcd down longer than its bound, or compacted) is started again
      // after a pause: etcd being away is not the end of this launcher (the lease says that).
      [this, alive = alive_](const std::string& why) {
        if (!*alive || rules_.stopped()) return;
        last_error_ = why;
        watch_retry_.expires_after(std::chrono::seconds(1));
        watch_retry_.async_wait([this, alive](const boost::system::error_code& ec) {
          if (!ec && *alive && !rules_.stopped()) follow();
        });
      },
      etcd::PrefixWatch::Options{.reconnect_bound = std::chrono::seconds(ttl_) * 2});
  read_leader();
}

void EtcdSeat::read_leader() {
  client_->leader(election_, [this, alive = alive_](Result<std::optional<etcd::KeyValue>> leader) {
    if (!*alive || rules_.stopped()) return;
    if (!leader) {
      last_error_ = leader.error;
      return;  // the watch reports the next change; a lost etcd ends the lease
    }
    last_error_.clear();
    if (!*leader || (*leader)->value.empty()) return;  // no leader, or not published yet
    const std::optional<std::string> opened = open_coordinator_address((*leader)->value, token_, (*leader)->key);
    if (!opened) {  // not followed: said once per key; the coordinator wait bounds what follows
      if (ignored_leader_ != (*leader)->key)
        spdlog::error("etcd names a coordinator under {} whose address is not sealed with this job's token: it was "
                      "not written by a launcher of this job (anyone with write access to {} can do this), so this "
                      "launcher does not join it",
                      rendezvous::printable((*leader)->key), prefix_);
      ignored_leader_ = (*leader)->key;
      return;
    }
    std::visit(Overloaded{[](std::monostate) {}, [this](const SeatRules::Lose& lost) { lose(lost.why); },
                          [this](const SeatRules::Follow& follow) {
                            callbacks_.on_coordinator(follow.address, follow.revision);
                          }},
               rules_.on_leader_seen(*opened, (*leader)->create_revision));
  });
}

void EtcdSeat::save_state(std::string state, std::function<void()> confirmed) {
  if (!rules_.keeps_state(leader_.has_value())) return;  // re-electing: kept until elected again
  pending_state_ = std::move(state);
  if (confirmed) {
    pending_confirmations_.push_back(std::move(confirmed));
    await_confirmation();
  }
  if (!writing_) write_state();
}

void EtcdSeat::write_state() {
  if (!pending_state_ || !leader_) return;
  writing_ = true;
  etcd::Txn txn;
  txn.compare.push_back(etcd::Compare::still_leader(*leader_));
  txn.success.push_back(etcd::TxnOp::put(prefix_ + "state", seal_saved_run({run_, *pending_state_}, token_,
                                                                           prefix_ + "state")));
  std::string written = std::move(*pending_state_);
  pending_state_.reset();
  writing_confirmations_ = std::move(pending_confirmations_);
  pending_confirmations_.clear();
  client_->txn(std::move(txn), [this, alive = alive_, written](Result<etcd::TxnResult> done) mutable {
    if (!*alive || rules_.stopped()) return;
    writing_ = false;
    const auto outcome = !done ? SeatRules::Write::Unanswered
                         : done->succeeded ? SeatRules::Write::Written
                                           : SeatRules::Write::AnotherLeaderKey;
    std::visit(Overloaded{[this](SeatRules::RemoveState) { remove_state(); },
                          [this](const SeatRules::Lose& lost) { lose(lost.why); },
                          [&](SeatRules::RetryWrite retry) { retry_write(retry, std::move(written), done.error); },
                          [this](SeatRules::Written) { confirm_written(); }},
               rules_.on_write_done(outcome));
  });
}

// Not written: tried again after a pause, the latest state first (and the confirmations that
// waited for this one wait for that one).
void EtcdSeat::retry_write(SeatRules::RetryWrite retry, std::string written, const std::string& error) {
  if (retry.check_lease)
    client_->keep_alive_once(lease_.id, [this, alive = alive_, lease = lease_.id](Result<std::int64_t> ttl) {
      if (!*alive) return;
      if (auto lost = rules_.on_lease_of_failed_write(lease == lease_.id && ttl && *ttl > 0)) lose(lost->why);
    });
  last_error_ = error;
  if (!pending_state_) pending_state_ = std::move(written);
  writing_confirmations_.insert(writing_confirmations_.end(), pending_confirmations_.begin(),
                                pending_confirmations_.end());
  pending_confirmations_ = std::move(writing_confirmations_);
  writing_confirmations_.clear();
  write_retry_.expires_after(kRetryPause);
  write_retry_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (!ec && *alive && !writing_) write_state();
  });
}

void EtcdSeat::confirm_written() {
  last_error_.clear();
  if (!writing_confirmations_.empty() && pending_confirmations_.empty()) {  // no generation waits any more
    rules_.on_all_confirmed();
    confirm_timer_.cancel();
  }
  auto confirmed = std::move(writing_confirmations_);
  writing_confirmations_.clear();
  for (auto& c : confirmed) c();
  if (pending_state_ && !writing_) write_state();
}

// Bounded (SeatRules::on_confirmation_asked): by a timer of its own from the first state that
// asked, whatever each write and retry takes.
void EtcdSeat::await_confirmation() {
  const auto deadline = rules_.on_confirmation_asked(PolicyClock::now());
  if (!deadline) return;
  confirm_timer_.expires_at(*deadline);
  confirm_timer_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (ec || !*alive) return;
    if (auto lost = rules_.on_confirm_deadline(PolicyClock::now(), last_error_)) lose(lost->why);
  });
}

std::string EtcdSeat::status_line() const {
  if (!unreachable_.empty())
    return fmt::format("etcd: unreachable ({}) — the workers keep running; no coordinator can be elected and the "
                       "job's state is saved only once etcd answers",
                       unreachable_);
  const std::string leads = leader_ ? fmt::format("this launcher (election revision {})", leader_->rev)
                            : rules_.followed_address().empty() ? "not known yet"
                                                                : rules_.followed_address();
  if (!last_error_.empty())
    return fmt::format("etcd: the last request failed ({}); coordinator: {}", last_error_, leads);
  return fmt::format("etcd: reachable; coordinator: {}", leads);
}

void EtcdSeat::lose(const std::string& why) {
  if (rules_.stopped()) return;
  leader_.reset();
  stop();
  if (callbacks_.on_lost) callbacks_.on_lost(why);
}

void EtcdSeat::end_run() {
  if (!rules_.on_end_run(leader_.has_value())) return stop();
  pending_state_.reset();  // no state is written any more; one in flight is let finish first
  if (!writing_) remove_state();
}

void EtcdSeat::remove_state() {
  etcd::Txn txn;
  txn.compare.push_back(etcd::Compare::still_leader(*leader_));
  txn.success.push_back(etcd::TxnOp::erase(prefix_ + "state"));
  // The lease goes after the removal (it holds the leader key the removal is fenced by).
  client_->txn(std::move(txn), [this, alive = alive_, key = prefix_ + "state"](Result<etcd::TxnResult> done) {
    if (!done) spdlog::warn("could not remove the job's state {} from etcd at the end ({}): remove it with `etcdctl "
                            "del {}`, or the next run under this id starts afresh over it",
                            key, done.error, key);
    if (*alive) stop();
  });
}

void EtcdSeat::stop() {
  if (!rules_.on_stop()) return;
  cancel_->cancel();
  retry_.cancel();
  write_retry_.cancel();
  watch_retry_.cancel();
  confirm_timer_.cancel();
  if (watch_) watch_->stop();
  if (keeper_) keeper_->stop();
  // Best effort: the keys go at once instead of after the TTL (the client may outlive us).
  if (lease_.id != 0) client_->revoke_lease(lease_.id, [client = client_](Result<etcd::Revision>) {});
}

}  // namespace ddplaunch
