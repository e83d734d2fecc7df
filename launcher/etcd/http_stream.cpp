// The etcd module's TCP connect and socket-error wording; see http_stream.h.
#include "etcd/http_stream.h"

#include <cstdio>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/field.hpp>

namespace ddplaunch::etcd::detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

std::string describe_socket_error(const boost::system::error_code& ec, const Endpoint& ep, Step step,
                                  std::chrono::milliseconds bound) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f s", bound.count() / 1000.0);
  const std::string at = ep.text();
  namespace err = asio::error;
  if (ec == beast::error::timeout || ec == err::timed_out) {
    if (step == Step::Resolve) return "the name '" + ep.host + "' did not resolve within " + secs + ": check the name and DNS";
    if (step == Step::Connect)
      return std::string("no connection within ") + secs + ": is " + at +
             " reachable from here (host up, no firewall dropping the port)?";
    return std::string("no answer within ") + secs + ": is " + at +
           " etcd's client port, and is etcd healthy (etcdctl --endpoints " + at + " endpoint health)?";
  }
  if (ec == err::connection_refused) return "connection refused: is etcd running at " + at + "?";
  if (ec == err::host_not_found || ec == err::host_not_found_try_again || ec == err::no_data)
    return "cannot resolve the host name '" + ep.host + "': check its spelling";
  if (ec == err::network_unreachable || ec == err::host_unreachable)
    return "no route to " + at + " (" + ec.message() + "): is the address right, is this host on that network?";
  if (ec == asio::error::eof || ec == err::connection_reset || ec == beast::http::error::end_of_stream ||
      ec == beast::http::error::partial_message)
    return "the connection closed before an answer (" + ec.message() + "): is " + at +
           " etcd's client port (2379), not its peer port (2380) or another service? If etcd serves TLS there "
           "(https://), give --rdzv-conf protocol=https,cacert=CA.pem";
  if (ec.category() == beast::http::make_error_code(beast::http::error::bad_version).category())
    return "the answer is not HTTP/1.1 (" + ec.message() + "): is " + at +
           " etcd's client port? (an https:// etcd needs --rdzv-conf protocol=https,cacert=CA.pem)";
  return ec.message();
}

asio::awaitable<std::string> connect_stream(beast::tcp_stream& stream, const Endpoint& ep,
                                            std::chrono::milliseconds bound) {
  const auto ex = co_await asio::this_coro::executor;
  const auto deadline = Clock::now() + bound;
  boost::system::error_code ec;
  std::vector<tcp::endpoint> addresses;
  const auto literal = asio::ip::make_address(ep.host, ec);
  if (!ec) {
    addresses.emplace_back(literal, ep.port);
  } else {
    // A name: the resolver runs on Asio's own thread; the guard's cancel makes the wait end
    // at the bound (the lookup itself is left to finish in the background).
    tcp::resolver resolver(ex);
    asio::steady_timer guard(ex, deadline);
    bool expired = false;
    guard.async_wait([&resolver, &expired](const boost::system::error_code& e) {
      if (!e) {
        expired = true;
        resolver.cancel();
      }
    });
    ec = {};
    const auto results = co_await resolver.async_resolve(ep.host, std::to_string(ep.port),
                                                         asio::redirect_error(asio::use_awaitable, ec));
    guard.cancel();
    if (expired) co_return describe_socket_error(beast::error::timeout, ep, Step::Resolve, bound);
    if (ec) co_return describe_socket_error(ec, ep, Step::Resolve, bound);
    for (const auto& r : results) addresses.push_back(r.endpoint());
  }
  stream.expires_at(deadline);
  ec = {};
  co_await stream.async_connect(addresses, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return describe_socket_error(ec, ep, Step::Connect, bound);
  co_return std::string{};
}

beast::http::request<beast::http::string_body> json_post(const Endpoint& ep, const std::string& target,
                                                         std::string body, const std::string& token) {
  beast::http::request<beast::http::string_body> req{beast::http::verb::post, target, 11};
  req.set(beast::http::field::host, ep.text());
  req.set(beast::http::field::content_type, "application/json");
  req.set(beast::http::field::user_agent, "ddplaunch");
  if (!token.empty()) req.set(beast::http::field::authorization, token);
  req.keep_alive(false);
  req.body() = std::move(body);
  req.prepare_payload();
  return req;
}

}  // namespace ddplaunch::etcd::detail
