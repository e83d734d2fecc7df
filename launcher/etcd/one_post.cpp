// One POST to one etcd endpoint; see one_post.h.
#include "etcd/one_post.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "etcd/gateway_stream.h"

namespace ddplaunch::etcd::detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {
constexpr std::uint64_t kAnswerLimit = 64u << 20;  // a prefix read of a large job stays far below
}  // namespace

asio::awaitable<Attempt> post_once(const Endpoint& ep, const GatewayCall& call, std::chrono::milliseconds connect_bound,
                                   const TlsContext* tls, const std::string& token, CancelSignal& cancel) {
  GatewayStream stream(co_await asio::this_coro::executor, tls);
  cancel.on_cancel([&stream] { stream.tcp().cancel(); });
  struct Clear {
    CancelSignal& c;
    ~Clear() { c.on_cancel({}); }
  } clear{cancel};
  auto done = [&](Attempt::Kind kind, std::string why) { return Attempt{kind, 0, {}, std::move(why)}; };

  const auto bound = call.failover_on_timeout ? std::min(connect_bound, call.timeout) : connect_bound;
  const auto why = co_await stream.connect(ep, bound);
  if (cancel.cancelled()) co_return done(Attempt::Kind::Cancelled, "cancelled");
  if (!why.empty()) co_return done(Attempt::Kind::Failed, why);

  boost::system::error_code ec;
  stream.tcp().expires_after(call.timeout);
  auto req = json_post(ep, call.target, call.body, token);
  co_await http::async_write(stream, req, asio::redirect_error(asio::use_awaitable, ec));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kAnswerLimit);
  if (!ec) co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
  if (cancel.cancelled()) co_return done(Attempt::Kind::Cancelled, "cancelled");
  if (ec == beast::error::timeout)
    co_return done(Attempt::Kind::TimedOut, stream.describe(ec, ep, Step::Answer, call.timeout));
  if (ec) co_return done(Attempt::Kind::Failed, stream.describe(ec, ep, Step::Answer, call.timeout));
  stream.tcp().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  auto res = parser.release();
  co_return Attempt{Attempt::Kind::Answered, res.result_int(), std::move(res.body()), {}};
}

}  // namespace ddplaunch::etcd::detail
