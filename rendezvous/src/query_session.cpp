// QuerySession: one proven connection, asked query after query; its first query rides on the
// signed status request, the later ones are sealed status frames of their own.
#include "ddplaunch/rendezvous/query_session.h"

#include <optional>
#include <utility>  // before Asio (Boost 1.74 + g++ 12)

#include <boost/asio.hpp>

#include "connection.h"
#include "frame_routes.h"
#include "handshake.h"
#include "wire.h"

namespace ddplaunch::rendezvous {

namespace {
// A master answers only those who prove a token; a tokenless job's master has one of its own.
constexpr const char* kProveTheTokenHint =
    " — a job's master answers only those who prove its token: run this as the job's user on the node that hosts "
    "its rendezvous (ddplaunch finds the token there), or give the job's token (DDPLAUNCH_TOKEN, --token-file)";
using Kind = QueryFailure::Kind;
}  // namespace

class QuerySession::Impl {
 public:
  using tcp = boost::asio::ip::tcp;
  Impl(std::string host, std::uint16_t port, std::string job_id, std::string token, bool held)
      : host_(std::move(host)), port_(port), job_id_(std::move(job_id)), token_(std::move(token)), held_(held),
        where_(detail::host_port_text(host_, port_)) {}
  ~Impl() { drop_connection(); }

  QueryAnswer ask(const std::string& query, QueryFailure& failure, std::chrono::milliseconds bound,
                  const QueryWait& wait) {
    request_ = Frame{};
    request_.kind = detail::kStatus;
    request_.job_id = job_id_;
    if (!query.empty()) request_.fields["query"] = query;
    if (held_) {
      request_.fields["hold"] = "1";
      request_.fields["seq"] = expected_seq_ = std::to_string(++seq_);
    }
    if (!wait.unless.empty() && wait.at_most.count() > 0) {
      request_.fields["unless"] = wait.unless;
      request_.fields["wait_ms"] = std::to_string(wait.at_most.count());
    }
    answer_.reset();
    const auto timeout = bound + wait.at_most;
    failure_ = {Kind::NoAnswer, "no answer from the master at " + where_ + " within " + detail::format_seconds(timeout)};
    io_.restart();
    if (conn_ && conn_->is_open() && proved_) conn_->send(request_);
    else connect();
    io_.run_for(timeout);
    failure = failure_;
    if (!answer_ || !held_) drop_connection();  // a late answer must not be taken for the next one's
    if (!answer_) return {};
    failure = {};
    return std::move(*answer_);
  }

  std::size_t opened() const { return opened_; }
  const std::string& where() const { return where_; }

 private:
  void finish(Kind kind, const std::string& why) {
    failure_ = {kind, why};
    io_.stop();
  }

  void drop_connection() {
    if (conn_) conn_->close_now();
    conn_.reset();
    proved_ = false;
  }

  void connect() {
    drop_connection();
    ++opened_;
    handshake_.emplace(token_, "");  // a query always proves the token
    auto resolver = std::make_shared<tcp::resolver>(io_);
    resolver->async_resolve(host_, std::to_string(port_), [this, resolver](const boost::system::error_code& ec,
                                                                           tcp::resolver::results_type results) {
      if (ec) return finish(Kind::Unresolved, "cannot resolve '" + host_ + "': " + ec.message());
      auto socket = std::make_shared<tcp::socket>(io_);
      boost::asio::async_connect(*socket, results, [this, socket](const boost::system::error_code& ec2,
                                                                  const tcp::endpoint&) {
        if (ec2)
          return finish(ec2 == boost::asio::error::connection_refused ? Kind::NothingListens : Kind::CannotConnect,
                        "cannot connect to the master at " + where_ + ": " + ec2.message());
        conn_ = std::make_shared<detail::Connection>(std::move(*socket), std::size_t{1} << 24);
        conn_->start([this](Frame& f) { on_frame(f); },
                     [this](const std::string& why) {
                       proved_ = false;
                       finish(Kind::Lost, "connection to the master at " + where_ + " lost before it answered: " + why);
                     });
      });
    });
  }

  void on_frame(Frame& f) {
    const auto kind = detail::frame_kind(f.kind);
    if (!kind) return;  // unknown kinds are ignored, as by a node
    switch (*kind) {
      case detail::FrameKind::Hello:
        if (std::string why = handshake_->sign(request_, f, kProtocolVersion); !why.empty())
          return finish(Kind::UnprovenMaster, why);
        conn_->send(request_);
        return;
      case detail::FrameKind::Welcome:
        proved_ = handshake_->master_proved(f);
        if (!proved_) return finish(Kind::UnprovenMaster, detail::unproven_master_error(where_));
        if (auto seal = handshake_->session_seal()) conn_->seal_frames(std::move(*seal));
        return;
      case detail::FrameKind::StatusReply: {
        if (!proved_) return finish(Kind::UnprovenMaster, detail::unproven_master_error(where_));
        const std::string* seq = detail::find_field(f.fields, "seq");
        if (held_ && seq && *seq != expected_seq_) return;  // the answer to a query given up on
        const std::string* text = detail::find_field(f.fields, "text");
        const std::string* digest = detail::find_field(f.fields, "digest");
        answer_ = QueryAnswer{text ? *text : "", digest ? *digest : ""};
        io_.stop();
        return;
      }
      case detail::FrameKind::Refuse: {
        const std::string* reason = detail::find_field(f.fields, "reason");
        return finish(Kind::Refused, "the master at " + where_ + " refused: " + (reason ? *reason : "(no reason)") +
                                         (token_.empty() ? std::string(kProveTheTokenHint) : std::string()));
      }
      default: return;  // what a node's session hears (heartbeats, progress): no answer yet
    }
  }

  boost::asio::io_context io_;
  std::string host_;
  std::uint16_t port_;
  std::string job_id_, token_;
  bool held_;
  std::string where_;
  std::shared_ptr<detail::Connection> conn_;
  std::optional<detail::NodeHandshake> handshake_;
  bool proved_ = false;
  Frame request_;
  std::optional<QueryAnswer> answer_;
  QueryFailure failure_;
  std::size_t opened_ = 0;
  long seq_ = 0;
  std::string expected_seq_;
};

QuerySession::QuerySession(std::string host, std::uint16_t port, std::string job_id, std::string token, bool held)
    : impl_(std::make_unique<Impl>(std::move(host), port, std::move(job_id), std::move(token), held)) {}
QuerySession::~QuerySession() = default;
QueryAnswer QuerySession::ask(const std::string& query, QueryFailure& failure, std::chrono::milliseconds bound,
                              const QueryWait& wait) {
  return impl_->ask(query, failure, bound, wait);
}
std::size_t QuerySession::connections_opened() const { return impl_->opened(); }
std::string QuerySession::where() const { return impl_->where(); }

}  // namespace ddplaunch::rendezvous
