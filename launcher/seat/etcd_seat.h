// EtcdSeat: this launcher's seat in a job whose coordinator lives on etcd
// (--rdzv-backend etcd). It registers the launcher under the job's prefix with a lease,
// campaigns for the coordinator's election, follows who leads, and — once elected —
// publishes where its rendezvous listens and writes the job policy's state after each
// decision, fenced by its leader key. When it keeps, renews or loses its seat is SeatRules'
// (policy/seat_rules.h) to say; this shell asks etcd and carries those decisions out. It
// decides nothing about the job: it reports
// "you lead", "the coordinator is at A (election revision R)" and "this seat is lost"
// to the NodeAgent, which acts.
//
// Keys under /ddplaunch/<job id>/:
//   launchers/<lease hex>   this launcher's host and pid (bound to its lease: gone with it)
//   coordinator/<lease hex> the election (etcd's election API; value: "HOST:PORT" once published)
//   state                   the JobPolicy's state document in its run's envelope (saved_run.h;
//                           written only by the leader: fenced; removed, fenced, when the job ends)
// With a token, the published address and the state are sealed with it (saved_run.h): a writer
// without the token cannot name a coordinator or plant a state the launchers act on.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "seat/etcd_job_client.h"
#include "config/launch_config.h"
#include "etcd/client.h"
#include "etcd/lease_keeper.h"
#include "etcd/watch.h"
#include "policy/seat_rules.h"

namespace ddplaunch {

struct SeatCallbacks {
  // This launcher won the election: host the coordinator, from `state` (nullopt: the job's
  // first coordinator), then publish() where it listens.
  std::function<void(std::optional<std::string> state)> on_elected;
  // The coordinator's published address and its election revision (a higher revision is a
  // newer coordinator; orders of an older one are not obeyed).
  std::function<void(const std::string& address, std::int64_t revision)> on_coordinator;
  // The lease is gone (etcd unreachable for a whole TTL, or it expired), or a fenced write
  // found another leader: this launcher leads nothing and may be the partitioned one.
  std::function<void(const std::string& why)> on_lost;
  // etcd stopped answering (why), or answers again (""): the lease may still be alive.
  std::function<void(const std::string& why)> on_reachability;
  // The sitting coordinator was elected again after etcd's stall, at this revision: its orders
  // carry it from now on.
  std::function<void(std::int64_t revision)> on_reelected;
};

class EtcdSeat {
 public:
  // Checks the endpoint list; nothing is sent yet.
  static Result<std::unique_ptr<EtcdSeat>> create(boost::asio::io_context& io, const LaunchConfig& config,
                                                  std::string hostname);
  ~EtcdSeat();

  // Grants the lease and registers; `started` gets "" or an error naming the endpoint (in
  // seconds: the client's connect bound). Then campaigns and follows the leader until stop().
  void start(SeatCallbacks callbacks, std::function<void(const std::string& error)> started);
  // Elected: tell every launcher where the coordinator listens.
  void publish(const std::string& address);
  // Elected: the policy's state after a decision. Writes are fenced (only while this
  // launcher's leader key is the one it won) and coalesced (the latest one wins).
  // `confirmed` (optional) runs once a write holding this state (or a later one) succeeded:
  // the proof that this launcher still leads. While etcd does not answer, writes are retried
  // and `confirmed` waits; a write that finds another leader loses the seat instead.
  void save_state(std::string state, std::function<void()> confirmed = {});
  // The run this launcher took part in (every assignment names it): an elected coordinator
  // resumes the saved state only when it is this run's.
  void joined_run(const std::string& run) { if (!run.empty()) known_run_ = run; }
  // The run this launcher coordinates, once elected (the saved one's, or a fresh nonce).
  const std::string& run() const { return run_; }
  // The job ended under this coordinator: remove the job's state from etcd (fenced by the
  // leader key: a coordinator that lost its seat removes nothing), then stop().
  void end_run();
  // This launcher's election revision while it leads (0: not leading).
  std::int64_t leader_revision() const { return leader_ ? leader_->rev : 0; }
  const std::string& prefix() const { return prefix_; }
  // One line for `ddplaunch status`: etcd reachable or not, who leads.
  std::string status_line() const;
  // Ends the campaign, the watch and the keepalives and revokes the lease (best effort).
  void stop();

 private:
  EtcdSeat(boost::asio::io_context& io, std::shared_ptr<etcd::Client> client, const LaunchConfig& config,
           std::string hostname);
  void register_seat(std::function<void(const std::string& error)> registered);
  void renew_after_stall(const std::string& why, SeatRules::RegisterAgain again);
  void campaign();
  void act_on_win(SeatRules::Win win, const etcd::LeaderKey& key, int round);
  void on_won(etcd::LeaderKey key);
  void on_won_again(etcd::LeaderKey key);
  void follow();
  void read_leader();
  void write_state();
  void retry_write(SeatRules::RetryWrite retry, std::string written, const std::string& error);
  void confirm_written();
  void await_confirmation();  // a write that a generation start waits for went out
  void lose(const std::string& why);
  void remove_state();  // end_run's fenced removal, then stop()

  boost::asio::io_context& io_;
  std::shared_ptr<etcd::Client> client_;
  std::string prefix_, election_, hostname_;
  std::string token_;      // seals the published address and the state ("" = unsealed)
  std::string known_run_;  // the run this launcher took part in
  std::string run_;        // the run this launcher coordinates, once elected
  std::string ignored_leader_;  // the last leader key whose address was not sealed right (said once)
  std::chrono::seconds ttl_;
  SeatRules rules_;  // when the seat is kept, renewed or lost
  // A generation start waits for etcd to confirm a state write (this launcher still leads) for
  // join_timeout at most (SeatRules), by a timer of its own.
  boost::asio::steady_timer confirm_timer_;
  SeatCallbacks callbacks_;
  etcd::LeaseGrant lease_;
  std::shared_ptr<etcd::LeaseKeeper> keeper_;
  std::shared_ptr<etcd::PrefixWatch> watch_;
  std::shared_ptr<etcd::CancelSignal> cancel_ = std::make_shared<etcd::CancelSignal>();
  boost::asio::steady_timer retry_;        // the campaign's next try
  boost::asio::steady_timer write_retry_;  // a state write's next try
  boost::asio::steady_timer watch_retry_;  // the leader watch's restart after it gave up
  std::optional<etcd::LeaderKey> leader_;          // this launcher's, while it leads
  std::optional<std::string> pending_state_;       // the next state to write
  std::vector<std::function<void()>> pending_confirmations_, writing_confirmations_;
  bool writing_ = false;
  std::string last_error_;                         // the last etcd error, for status
  std::string unreachable_;                        // why etcd does not answer ("" = it does)
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // callbacks after destruction do nothing
};

}  // namespace ddplaunch
