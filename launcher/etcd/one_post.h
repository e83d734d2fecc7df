// Internal to the etcd module: one POST to one endpoint (connect, TLS when the client has a
// context, the request with its auth token, the whole answer), bounded and cancellable. The
// failover over endpoints (gateway_transport.cpp) and the authentication (auth_token.cpp)
// are made of these.
#pragma once

#include <chrono>
#include <string>
#include <utility>  // before Asio: Boost 1.74 awaitable.hpp uses std::exchange unincluded

#include <boost/asio/awaitable.hpp>

#include "etcd/endpoints.h"
#include "etcd/gateway_transport.h"

namespace ddplaunch::etcd::detail {

struct Attempt {
  enum class Kind { Answered, Failed, TimedOut, Cancelled };
  Kind kind = Kind::Failed;
  unsigned status = 0;  // HTTP status when answered
  std::string body;
  std::string why;      // worded, when not answered
};

// `token`: the Authorization header's value, "" for none. `connect_bound` bounds the connect
// and the TLS handshake, `call.timeout` the answer.
boost::asio::awaitable<Attempt> post_once(const Endpoint& ep, const GatewayCall& call,
                                          std::chrono::milliseconds connect_bound, const TlsContext* tls,
                                          const std::string& token, CancelSignal& cancel);

}  // namespace ddplaunch::etcd::detail
