// One POST with failover over the endpoint list; see gateway_transport.h.
#include "etcd/gateway_transport.h"

#include <cstdio>

#include "etcd/http_stream.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace ddplaunch::etcd {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr std::uint64_t kAnswerLimit = 64u << 20;  // a prefix read of a large job stays far below

struct Attempt {
  enum class Kind { Answered, Failed, TimedOut, Cancelled };
  Kind kind = Kind::Failed;
  unsigned status = 0;
  std::string body;
  std::string why;
};

asio::awaitable<Attempt> attempt(const Endpoint& ep, const GatewayCall& call, std::chrono::milliseconds connect_bound,
                                 CancelSignal& cancel) {
  beast::tcp_stream stream(co_await asio::this_coro::executor);
  cancel.on_cancel([&stream] { stream.cancel(); });
  struct Clear {
    CancelSignal& c;
    ~Clear() { c.on_cancel({}); }
  } clear{cancel};
  auto done = [&](Attempt::Kind kind, std::string why) { return Attempt{kind, 0, {}, std::move(why)}; };

  const auto bound = call.failover_on_timeout ? std::min(connect_bound, call.timeout) : connect_bound;
  const auto why = co_await detail::connect_stream(stream, ep, bound);
  if (cancel.cancelled()) co_return done(Attempt::Kind::Cancelled, "cancelled");
  if (!why.empty()) co_return done(Attempt::Kind::Failed, why);

  boost::system::error_code ec;
  stream.expires_after(call.timeout);
  auto req = detail::json_post(ep, call.target, call.body);
  co_await http::async_write(stream, req, asio::redirect_error(asio::use_awaitable, ec));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kAnswerLimit);
  if (!ec) co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
  if (cancel.cancelled()) co_return done(Attempt::Kind::Cancelled, "cancelled");
  if (ec == beast::error::timeout)
    co_return done(Attempt::Kind::TimedOut, detail::describe_socket_error(ec, ep, detail::Step::Answer, call.timeout));
  if (ec) co_return done(Attempt::Kind::Failed, detail::describe_socket_error(ec, ep, detail::Step::Answer, call.timeout));
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  auto res = parser.release();
  co_return Attempt{Attempt::Kind::Answered, res.result_int(), std::move(res.body()), {}};
}

// The gateway answers errors as {"error": ..., "code": N}; gRPC's Unavailable (14) means this
// member cannot serve now (no quorum, no leader, stopping): another member may.
bool member_unavailable(unsigned status, const wire::Json& body) {
  return status == 503 || wire::error_code(body) == 14;
}

}  // namespace

void CancelSignal::cancel() {
  cancelled_ = true;
  if (close_) close_();
}

std::string endpoint_label(const std::string& endpoint, const std::string& flag) {
  return "etcd at " + endpoint + " (" + flag + ")";
}

std::string seconds_text(std::chrono::milliseconds d) {
  char out[32];
  std::snprintf(out, sizeof out, "%.1f s", d.count() / 1000.0);
  return out;
}

GatewayTransport::GatewayTransport(asio::io_context& io, TransportOptions options)
    : io_(io), options_(std::move(options)) {}

void GatewayTransport::post(GatewayCall call, std::shared_ptr<CancelSignal> cancel, Done done) {
  if (!cancel) cancel = std::make_shared<CancelSignal>();
  auto run = [this, call = std::move(call), cancel, done = std::move(done)]() -> asio::awaitable<void> {
    const auto& eps = options_.endpoints;
    std::vector<std::string> failures;
    for (std::size_t i = 0; i < eps.size(); ++i) {
      const std::size_t index = (current_ + i) % eps.size();
      const auto& ep = eps[index];
      auto a = co_await attempt(ep, call, options_.connect_timeout, *cancel);
      if (a.kind == Attempt::Kind::Cancelled) {
        done(Result<GatewayAnswer>::failure(call.what + " at " + ep.text() + " cancelled"));
        co_return;
      }
      if (a.kind == Attempt::Kind::TimedOut && !call.failover_on_timeout) {
        done(Result<GatewayAnswer>::failure(endpoint_label(ep.text(), options_.flag) + ": " + call.what +
                                            " did not complete within " + seconds_text(call.timeout)));
        co_return;
      }
      if (a.kind == Attempt::Kind::Answered) {
        auto body = wire::Json::parse(a.body, nullptr, /*allow_exceptions=*/false);
        // A stream (lease keepalive) delivers one message per line: the first is the answer.
        if (body.is_discarded()) {
          const auto line_end = a.body.find('\n');
          if (line_end != std::string::npos)
            body = wire::Json::parse(a.body.substr(0, line_end), nullptr, false);
        }
        if (body.is_discarded()) {
          failures.push_back(ep.text() + ": HTTP " + std::to_string(a.status) +
                             " with an answer that is not JSON: is it etcd 3.4 or newer (the v3 JSON gateway)?");
          continue;
        }
        if (body.is_object() && body.contains("result")) body = body["result"];
        if (member_unavailable(a.status, body)) {
          failures.push_back(ep.text() + ": this member cannot serve now (" + wire::error_text(body) + ")");
          continue;
        }
        current_ = index;
        done(Result<GatewayAnswer>::success({a.status, std::move(body), ep.text()}));
        co_return;
      }
      failures.push_back(ep.text() + ": " + a.why);
    }
    std::string why;
    if (eps.size() == 1) {
      why = endpoint_label(eps[0].text(), options_.flag) + ": " + call.what + " failed: " +
            failures[0].substr(eps[0].text().size() + 2);
    } else {
      why = call.what + " failed on every etcd endpoint of " + options_.flag + " (" + std::to_string(eps.size()) + "):";
      for (const auto& f : failures) why += "\n  " + f;
    }
    current_ = (current_ + 1) % eps.size();  // the next request starts elsewhere
    done(Result<GatewayAnswer>::failure(why));
  };
  asio::co_spawn(io_, std::move(run), asio::detached);
}

}  // namespace ddplaunch::etcd
