// Rendezvous client: connect with retries, handshake (mutual token proof), join, heartbeats,
// and the frames the master sends (assignment, refusal, abort, progress, launcher messages).
#include "ddplaunch/rendezvous/client.h"

#include <utility>  // before Asio (Boost 1.74 + g++ 12)
#include <vector>

#include <boost/asio.hpp>

#include "connection.h"
#include "frame_routes.h"
#include "handshake.h"
#include "keepalive_pace.h"
#include "wire.h"

namespace ddplaunch::rendezvous {

class Client::Impl : public std::enable_shared_from_this<Client::Impl> {
 public:
  using tcp = boost::asio::ip::tcp;
  // kHandshake: waiting for the greeting; kProving: join sent, waiting for the master's proof.
  enum class Phase { kIdle, kConnecting, kHandshake, kProving, kWaiting, kAssigned, kClosed };

  Impl(boost::asio::io_context& io, ClientOptions o, ClientCallbacks c)
      : io_(io), opt_(std::move(o)), cb_(std::move(c)), resolver_(io), socket_(io),
        join_timer_(io), attempt_timer_(io), retry_timer_(io), heartbeat_timer_(io),
        where_(detail::host_port_text(opt_.host, opt_.port)), handshake_(opt_.token, opt_.own_node_secret),
        pace_{opt_.heartbeat_interval, opt_.heartbeat_timeout} {}

  void join(const NodeFacts& facts) {
    if (phase_ != Phase::kIdle) return;
    facts_ = facts;
    phase_ = Phase::kConnecting;
    start_join_timer();
    attempt();
  }

  void start_join_timer() {
    join_timer_.expires_after(opt_.join_timeout);
    join_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->on_join_deadline();
    });
  }

  void on_join_deadline() {
    if (phase_ == Phase::kConnecting) {
      return lost("could not connect to the master at " + where_ + " within " +
                  detail::format_seconds(opt_.join_timeout) + " (" + std::to_string(attempts_) +
                  " attempts; last error: " + last_error_ +
                  "); is ddplaunch running on the master node, and is the port reachable?");
    }
    if (phase_ != Phase::kHandshake && phase_ != Phase::kProving && phase_ != Phase::kWaiting) return;
    std::string why = "join timeout: no assignment from the master at " + where_ + " after " +
                      detail::format_seconds(opt_.join_timeout);
    if (!last_missing_.empty()) why += "; the master was still waiting for: " + detail::join_list(last_missing_);
    lost(why);
  }

  void attempt() {
    ++attempts_;
    auto id = ++attempt_id_;
    // An address literal (the usual --master, and always a standalone job's) needs no
    // resolver: Asio's starts a thread of its own at the first lookup.
    boost::system::error_code literal_error;
    const auto literal = boost::asio::ip::make_address(opt_.host, literal_error);
    if (!literal_error) return connect({tcp::endpoint(literal, opt_.port)}, id);
    resolver_.async_resolve(opt_.host, std::to_string(opt_.port),
        [self = shared_from_this(), id](const boost::system::error_code& ec,
                                        tcp::resolver::results_type results) {
          if (self->phase_ != Phase::kConnecting || id != self->attempt_id_) return;
          if (ec) {
            self->last_error_ = "cannot resolve '" + self->opt_.host + "': " + ec.message();
            return self->schedule_retry();
          }
          std::vector<tcp::endpoint> endpoints;
          for (const auto& entry : results) endpoints.push_back(entry.endpoint());
          self->connect(endpoints, id);
        });
  }

  void connect(const std::vector<tcp::endpoint>& endpoints, std::uint64_t id) {
    socket_ = tcp::socket(io_);
    connect_started_ = Clock::now();
    timed_out_ = false;
    attempt_timer_.expires_after(opt_.connect_timeout);
    attempt_timer_.async_wait([self = shared_from_this(), id](const boost::system::error_code& ec) {
      if (ec || id != self->attempt_id_ || self->phase_ != Phase::kConnecting) return;
      self->timed_out_ = true;
      boost::system::error_code ignored;
      self->socket_.close(ignored);
    });
    if (!opt_.source_address.empty()) return connect_from(opt_.source_address, endpoints.front(), id);
    boost::asio::async_connect(socket_, endpoints,
        [self = shared_from_this(), id](const boost::system::error_code& ec, const tcp::endpoint&) {
          self->on_connect_result(ec, id);
        });
  }

  // ClientOptions::source_address: the socket is bound to it before it connects.
  void connect_from(const std::string& source, const tcp::endpoint& to, std::uint64_t id) {
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(source, ec);
    if (!ec) socket_.open(to.protocol(), ec);
    if (!ec) socket_.bind(tcp::endpoint(address, 0), ec);
    if (ec) {
      attempt_timer_.cancel();
      last_error_ = "cannot connect from " + source + ": " + ec.message();
      return schedule_retry();
    }
    socket_.async_connect(to, [self = shared_from_this(), id](const boost::system::error_code& ec) {
      self->on_connect_result(ec, id);
    });
  }

  void on_connect_result(const boost::system::error_code& ec, std::uint64_t id) {
    if (phase_ != Phase::kConnecting || id != attempt_id_) return;
    attempt_timer_.cancel();
    if (ec) {
      last_error_ = timed_out_ ? "connect timed out after " + detail::format_seconds(opt_.connect_timeout)
                               : ec.message();
      return schedule_retry();
    }
    on_connected();
  }

  void schedule_retry(std::chrono::milliseconds pause = {}) {
    boost::system::error_code ignored;
    socket_.close(ignored);
    retry_timer_.expires_after(pause.count() > 0 ? pause : opt_.retry_interval);
    retry_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec && self->phase_ == Phase::kConnecting) self->attempt();
    });
  }

  void on_connected() {
    phase_ = Phase::kHandshake;
    rtt_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - connect_started_).count();
    conn_ = std::make_shared<detail::Connection>(std::move(socket_), opt_.max_frame_bytes);
    std::weak_ptr<Impl> weak = shared_from_this();
    conn_->start([weak](Frame& f) { if (auto s = weak.lock()) s->on_frame(f); },
                 [weak](const std::string& why) {
                   auto s = weak.lock();
                   if (s && s->phase_ == Phase::kHandshake)
                     return s->retry_before_greeting("the master at " + s->where_ + " closed the connection "
                                                     "before greeting (" + why + ")");
                   if (s && s->phase_ == Phase::kProving)  // no refusal said why: not a master's way
                     return s->retry_after_impostor("the peer at " + s->where_ + " closed the connection "
                                                    "without proving the rendezvous token (" + why + ")");
                   if (s) s->lost("connection to the master at " + s->where_ + " lost: " + why);
                 });
    last_heard_ = Clock::now();
    attempt_timer_.expires_after(opt_.connect_timeout);
    attempt_timer_.async_wait([self = shared_from_this(), id = attempt_id_](const boost::system::error_code& ec) {
      if (ec || id != self->attempt_id_ || self->phase_ != Phase::kHandshake) return;
      self->retry_before_greeting("the master at " + self->where_ + " accepted the connection but sent no greeting "
                                  "within " + detail::format_seconds(self->opt_.connect_timeout) +
                                  " (is it out of file descriptors or flooded? is that port a ddplaunch rendezvous?)");
    });
    heartbeat_tick();
  }

  // Before the greeting nothing is decided yet: a master out of file descriptors, or over its
  // cap of peers that have not joined, closes or ignores new connections for a while. That is
  // transient: connect again until the join timeout, which then reports this as the last error.
  void retry_before_greeting(const std::string& why, std::chrono::milliseconds pause = {}) {
    last_error_ = why;
    phase_ = Phase::kConnecting;
    heartbeat_timer_.cancel();
    attempt_timer_.cancel();
    if (conn_) conn_->close_now();
    conn_.reset();
    schedule_retry(pause);
  }

  // A peer on the master's port that is not this job's master (a squatter, an impostor, a
  // master of another job or token) decides nothing: the real master may take the port, or be
  // named, later. Like a refused connection it is retried until the join timeout, after a
  // pause that grows, and its reason becomes the join timeout's last error.
  void retry_after_impostor(const std::string& why) {
    impostor_pause_ = impostor_pause_.count() == 0 ? opt_.impostor_retry_first
                                                   : std::min(impostor_pause_ * 2, opt_.impostor_retry_most);
    if (why != last_impostor_) {
      last_impostor_ = why;
      if (cb_.on_impostor) cb_.on_impostor(why);
    }
    if (phase_ == Phase::kClosed) return;  // the callback closed the client
    retry_before_greeting(why, std::max(impostor_pause_, opt_.retry_interval));
  }

  Frame frame_of(const char* kind) const {
    Frame f;
    f.kind = kind;
    f.job_id = opt_.job_id;
    f.generation = generation_;
    return f;
  }

  // Each frame goes through frame_routes.h's client_routes; what finds no route is decided here.
  void on_frame(Frame& f) {
    last_heard_ = Clock::now();
    const auto stage = phase_ == Phase::kHandshake ? detail::LinkStage::Greeting
                       : phase_ == Phase::kProving ? detail::LinkStage::Proof
                                                   : detail::LinkStage::Session;
    static constexpr auto kRoutes = detail::client_routes<Impl>();
    if (const auto* route = detail::find_route(kRoutes, detail::frame_kind(f.kind), stage))
      return (this->*route->handle)(f);
    if (stage == detail::LinkStage::Greeting)
      return retry_after_impostor("the peer at " + where_ + " sent '" + f.kind +
                                  "' instead of a greeting: it is not a ddplaunch rendezvous (is another program "
                                  "holding the port?)");
    // Until the master proved the token, only its welcome or a refusal is believed.
    if (stage == detail::LinkStage::Proof) return retry_after_impostor(detail::unproven_master_error(where_));
    // Session: unknown kinds (and handshake kinds) are ignored: a newer master may send more.
  }

  void on_hello(Frame& f) {
    attempt_timer_.cancel();
    Frame join = frame_of(detail::kJoin);
    detail::put_facts(join.fields, "f.", facts_);
    if (std::string error = handshake_.sign(join, f, opt_.protocol_version); !error.empty()) return lost(error);
    phase_ = Phase::kProving;
    conn_->send(join);
  }

  void on_welcome(Frame& f) {
    if (!handshake_.master_proved(f)) return retry_after_impostor(detail::unproven_master_error(where_));
    if (auto seal = handshake_.session_seal()) conn_->seal_frames(std::move(*seal));
    phase_ = Phase::kWaiting;
  }

  void on_assign(Frame& f) {
    Assignment a;
    std::string error;
    if (!detail::get_assignment(f, a, error))
      return lost("malformed assignment from the master at " + where_ + ": " + error);
    phase_ = Phase::kAssigned;
    generation_ = a.generation;
    join_timer_.cancel();
    if (cb_.on_assignment) cb_.on_assignment(a);
  }

  void on_refuse(Frame& f) {
    auto* reason = detail::find_field(f.fields, "reason");
    std::string why = reason ? *reason : "(no reason given)";
    close();
    if (cb_.on_refused) cb_.on_refused(why);
  }

  void on_abort(Frame& f) {
    auto* reason = detail::find_field(f.fields, "reason");
    lost("the master at " + where_ + " gave up: " + (reason ? *reason : "(no reason given)"));
  }

  void on_progress(Frame& f) {
    long long joined = 0, expected = 0;
    auto* j = detail::find_field(f.fields, "joined");
    auto* e = detail::find_field(f.fields, "expected");
    auto* m = detail::find_field(f.fields, "missing");
    if (!j || !e || !detail::parse_int(*j, 0, 1 << 30, joined) || !detail::parse_int(*e, 0, 1 << 30, expected)) return;
    last_missing_ = m ? detail::split_list(*m) : std::vector<std::string>{};
    if (cb_.on_progress) cb_.on_progress(static_cast<int>(joined), static_cast<int>(expected), last_missing_);
  }

  // The master says how often it sends: this node sends as often and waits as long, scaled
  // (keepalive_pace.h). A heartbeat is answered only when it asks for a round trip.
  void on_heartbeat(Frame& f) {
    if (auto announced = detail::announced_pace(f)) {
      const detail::KeepalivePace paced = detail::paced_by(opt_.heartbeat_interval, opt_.heartbeat_timeout, *announced);
      const bool slower = paced.interval > pace_.interval;
      pace_ = paced;
      if (slower) schedule_heartbeat();  // the next one at the new pace, not at the old one's
    }
    if (!detail::asks_echo(f)) return;
    Frame ack = frame_of(detail::kHeartbeatAck);
    ack.fields = std::move(f.fields);
    conn_->send(ack);
  }

  void on_heartbeat_ack(Frame& f) { detail::note_heartbeat_ack(f.fields, hb_seq_, hb_sent_, rtt_ms_); }

  void on_message(Frame& f) {
    if (cb_.on_message) cb_.on_message(Message{f.subtype, f.generation, std::move(f.fields)});
  }

  void heartbeat_tick() {
    if (phase_ != Phase::kHandshake && phase_ != Phase::kProving && phase_ != Phase::kWaiting &&
        phase_ != Phase::kAssigned)
      return;
    auto now = Clock::now();
    const bool judge = silence_.may_judge(now, pace_.interval);
    if (judge && now - last_heard_ > pace_.timeout) {
      auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_heard_);
      return lost("no message from the master at " + where_ + " for " + detail::format_seconds(quiet) +
                  " (heartbeat timeout " + detail::format_seconds(pace_.timeout) + ")");
    }
    const bool speaking = phase_ != Phase::kHandshake && phase_ != Phase::kProving;
    if (speaking && detail::heartbeat_due(now, conn_->last_sent(), pace_.interval)) {
      Frame hb = frame_of(detail::kHeartbeat);
      detail::put_heartbeat(hb, ++hb_seq_, pace_.interval);
      hb_sent_ = now;
      conn_->send(hb);
    }
    schedule_heartbeat(speaking ? conn_->last_sent() : now);
  }

  // The next heartbeat an interval after this node's last frame (`from`): a node that reports
  // more often than its pace sends none.
  void schedule_heartbeat(Clock::time_point from = Clock::now()) {
    heartbeat_timer_.expires_at(std::max(from + pace_.interval, Clock::now() + std::chrono::milliseconds(1)));
    heartbeat_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->heartbeat_tick();
    });
  }

  void rejoin(Generation generation) {
    if (phase_ != Phase::kAssigned && phase_ != Phase::kWaiting) return;
    generation_ = generation;
    conn_->send(frame_of(detail::kRejoin));
    phase_ = Phase::kWaiting;
    last_missing_.clear();
    start_join_timer();
  }

  void wait_as_spare() {
    if (phase_ == Phase::kWaiting) join_timer_.cancel();
  }

  void send(const Message& m) {
    if (phase_ != Phase::kWaiting && phase_ != Phase::kAssigned) return;
    Frame f = frame_of(detail::kMsg);
    f.generation = m.generation;
    f.subtype = m.type;
    f.fields = m.fields;
    conn_->send(f);
  }

  void lost(const std::string& why) {
    if (phase_ == Phase::kClosed) return;
    close();
    if (cb_.on_lost) cb_.on_lost(why);
  }

  void close() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    resolver_.cancel();
    join_timer_.cancel();
    attempt_timer_.cancel();
    retry_timer_.cancel();
    heartbeat_timer_.cancel();
    boost::system::error_code ignored;
    socket_.close(ignored);
    if (conn_) conn_->close_graceful(std::chrono::milliseconds(1000));
  }

  boost::asio::io_context& io_;
  ClientOptions opt_;
  ClientCallbacks cb_;
  tcp::resolver resolver_;
  tcp::socket socket_;
  boost::asio::steady_timer join_timer_, attempt_timer_, retry_timer_, heartbeat_timer_;
  std::string where_;
  std::shared_ptr<detail::Connection> conn_;
  detail::NodeHandshake handshake_;
  NodeFacts facts_;
  Phase phase_ = Phase::kIdle;
  std::string last_error_ = "(none)";
  std::string last_impostor_;                     // the last impostor reason reported
  std::chrono::milliseconds impostor_pause_{0};   // the pause after the next impostor answer
  int attempts_ = 0;
  std::uint64_t attempt_id_ = 0;
  bool timed_out_ = false;
  Clock::time_point connect_started_, last_heard_, hb_sent_;
  std::uint64_t hb_seq_ = 0;
  Generation generation_;
  detail::SilenceJudge silence_;  // a late heartbeat tick judges nobody
  detail::KeepalivePace pace_;    // the master's pace, as its heartbeats announce it
  double rtt_ms_ = 0;
  std::vector<std::string> last_missing_;
};

Client::Client(boost::asio::io_context& io, ClientOptions options, ClientCallbacks callbacks)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(callbacks))) {}
Client::~Client() { impl_->close(); }
void Client::join(const NodeFacts& facts) { impl_->join(facts); }
void Client::rejoin(Generation generation) { impl_->rejoin(generation); }
void Client::send(const Message& message) { impl_->send(message); }
void Client::wait_as_spare() { impl_->wait_as_spare(); }
std::string Client::local_address() const { return impl_->conn_ ? impl_->conn_->local_ip() : ""; }
double Client::rtt_ms() const { return impl_->rtt_ms_; }
void Client::close() { impl_->close(); }

}  // namespace ddplaunch::rendezvous
