// Internal to the etcd module: the TCP connect and the request shape shared by the one-shot
// calls (one_post.cpp) and the watch stream (watch.cpp), and how a socket error reads for
// the person at the terminal (TLS's own failures: gateway_stream.h).
#pragma once

#include <chrono>
#include <string>
#include <utility>  // before Asio: Boost 1.74 awaitable.hpp uses std::exchange unincluded

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/message.hpp>

#include "etcd/endpoints.h"

namespace ddplaunch::etcd::detail {

using Clock = std::chrono::steady_clock;

enum class Step { Resolve, Connect, Answer };

// Why an attempt failed, worded: "connection refused: is etcd running at H:P?".
std::string describe_socket_error(const boost::system::error_code& ec, const Endpoint& ep, Step step,
                                  std::chrono::milliseconds bound);

// Resolves (names only; literals are used as they are) and connects `stream` to `ep`,
// bounded by `bound`. Returns "" or the worded reason. The stream's expiry is left set.
boost::asio::awaitable<std::string> connect_stream(boost::beast::tcp_stream& stream, const Endpoint& ep,
                                                   std::chrono::milliseconds bound);

// `token`: etcd's auth token for the Authorization header ("" = none).
boost::beast::http::request<boost::beast::http::string_body> json_post(const Endpoint& ep, const std::string& target,
                                                                        std::string body, const std::string& token);

}  // namespace ddplaunch::etcd::detail
