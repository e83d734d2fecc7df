// `ddplaunch status`: a short-lived connection that proves the token, checks the master's
// proof, asks for its status text and returns it. Runs its own io_context, bounded by the caller's timeout.
#include <utility>  // before Asio (Boost 1.74 + g++ 12)

#include <boost/asio.hpp>

#include "connection.h"
#include "frame_routes.h"
#include "ddplaunch/rendezvous/client.h"
#include "handshake.h"
#include "wire.h"

namespace ddplaunch::rendezvous {

namespace {
// A master answers only those who prove a token; a tokenless job's master has one of its own.
constexpr const char* kProveTheTokenHint =
    " — a job's master answers only those who prove its token: run this as the job's user on the node that hosts "
    "its rendezvous (ddplaunch finds the token there), or give the job's token (DDPLAUNCH_TOKEN, --token-file)";
}  // namespace

std::string query_status(const std::string& host, std::uint16_t port, std::string job_id,
                         std::string token, std::chrono::milliseconds timeout, QueryFailure& failure) {
  return query_master(host, port, std::move(job_id), std::move(token), "", timeout, failure);
}

std::string query_master(const std::string& host, std::uint16_t port, std::string job_id, std::string token,
                         const std::string& query, std::chrono::milliseconds timeout, QueryFailure& failure) {
  using tcp = boost::asio::ip::tcp;
  boost::asio::io_context io;
  std::string where = detail::host_port_text(host, port);
  std::string text;
  bool answered = false, master_proved = false;
  detail::NodeHandshake handshake(token, "");  // a query always proves the token
  using Kind = QueryFailure::Kind;
  failure = {Kind::NoAnswer, "no answer from the master at " + where + " within " + detail::format_seconds(timeout)};
  tcp::resolver resolver(io);
  tcp::socket socket(io);
  std::shared_ptr<detail::Connection> conn;
  auto finish = [&](Kind kind, const std::string& why) {
    failure = {kind, why};
    io.stop();
  };
  resolver.async_resolve(host, std::to_string(port), [&](const boost::system::error_code& ec,
                                                          tcp::resolver::results_type results) {
    if (ec) return finish(Kind::Unresolved, "cannot resolve '" + host + "': " + ec.message());
    boost::asio::async_connect(socket, results, [&](const boost::system::error_code& ec2,
                                                    const tcp::endpoint&) {
      if (ec2)
        return finish(ec2 == boost::asio::error::connection_refused ? Kind::NothingListens : Kind::CannotConnect,
                      "cannot connect to the master at " + where + ": " + ec2.message());
      conn = std::make_shared<detail::Connection>(std::move(socket), std::size_t{1} << 24);
      conn->start(
          [&](Frame& f) {
            const auto kind = detail::frame_kind(f.kind);
            if (!kind) return;  // unknown kinds are ignored, as by a node
            switch (*kind) {
              case detail::FrameKind::Hello: {
                Frame ask;
                ask.kind = detail::kStatus;
                ask.job_id = job_id;
                if (!query.empty()) ask.fields["query"] = query;
                if (std::string why = handshake.sign(ask, f, kProtocolVersion); !why.empty())
                  return finish(Kind::UnprovenMaster, why);
                conn->send(ask);
                return;
              }
              case detail::FrameKind::Welcome:
                master_proved = handshake.master_proved(f);
                if (!master_proved) return finish(Kind::UnprovenMaster, detail::unproven_master_error(where));
                if (auto seal = handshake.session_seal()) conn->seal_frames(std::move(*seal));
                return;
              case detail::FrameKind::StatusReply: {
                if (!master_proved) return finish(Kind::UnprovenMaster, detail::unproven_master_error(where));
                auto* t = detail::find_field(f.fields, "text");
                text = t ? *t : "";
                answered = true;
                failure = {};
                io.stop();
                return;
              }
              case detail::FrameKind::Refuse: {
                auto* r = detail::find_field(f.fields, "reason");
                return finish(Kind::Refused,
                              "the master at " + where + " refused: " + (r ? *r : "(no reason)") +
                                  (token.empty() ? std::string(kProveTheTokenHint) : std::string()));
              }
              default:
                return;  // what a node's session hears (heartbeats, progress): no answer yet
            }
          },
          [&](const std::string& why) {
            finish(Kind::Lost, "connection to the master at " + where + " lost before it answered: " + why);
          });
    });
  });
  io.run_for(timeout);
  if (conn) conn->close_now();
  return answered ? text : std::string();
}

}  // namespace ddplaunch::rendezvous
