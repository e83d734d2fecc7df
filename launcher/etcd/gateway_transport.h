// One POST to etcd's v3 JSON gateway over HTTP/1.1 (Boost.Beast) on the caller's io_context:
// to the current endpoint, and on a connection error or timeout to the next one of the list,
// each endpoint at most once per request; over TLS when the client has a TLS context, with
// etcd's auth token when it has credentials (got from /v3/auth/authenticate the first time,
// and again once when etcd refuses it). Every attempt is bounded (connect and answer);
// the answer is handed back as it came (status + JSON), the failures worded for the person
// at the terminal: which endpoint, what failed, why it likely failed.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <utility>  // before Asio: Boost 1.74 awaitable.hpp uses std::exchange unincluded

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include "ddplaunch/base/result.h"
#include "etcd/endpoints.h"
#include "etcd/tls_context.h"
#include "etcd/wire.h"

namespace ddplaunch::etcd {

// Cancels a request in flight (a campaign's wait, a watch): its socket is closed and it
// completes with "cancelled". Single-threaded: call on the io_context's thread.
class CancelSignal {
 public:
  void cancel();
  bool cancelled() const { return cancelled_; }
  // Set by the request while a socket is open; cleared when it closes.
  void on_cancel(std::function<void()> close) { close_ = std::move(close); }

 private:
  bool cancelled_ = false;
  std::function<void()> close_;
};

struct GatewayCall {
  std::string what;    // for messages: "put 'job/x'"
  std::string target;  // "/v3/kv/put"
  std::string body;    // the request's JSON
  std::chrono::milliseconds timeout{5000};  // the answer's bound, per endpoint
  // A campaign's timeout is the caller's wait, not a sign of a dead endpoint.
  bool failover_on_timeout = true;
};

struct GatewayAnswer {
  unsigned status = 0;  // HTTP status
  wire::Json body;      // parsed; a stream's {"result": ...} unwrapped
  std::string endpoint;
};

// etcd's authentication (`--rdzv-conf username=...`); an empty user: none.
struct Credentials {
  std::string user;
  std::string password;
  std::string password_source;  // for messages: "password_file=/p" or "DDPLAUNCH_ETCD_PASSWORD"
};

struct TransportOptions {
  std::vector<Endpoint> endpoints;
  std::string flag = "--rdzv-endpoint";  // where the endpoints came from, for messages
  std::chrono::milliseconds connect_timeout{3000};  // the TCP connect and the TLS handshake
  std::shared_ptr<const TlsContext> tls;  // null: plain http
  Credentials credentials;
};

class GatewayTransport {
 public:
  using Done = std::function<void(Result<GatewayAnswer>)>;
  GatewayTransport(boost::asio::io_context& io, TransportOptions options);

  // `done` runs on the io_context, never inside this call. The transport must outlive the call.
  void post(GatewayCall call, std::shared_ptr<CancelSignal> cancel, Done done);

  const TransportOptions& options() const { return options_; }
  // The endpoint the next request goes to first (the last that answered).
  std::size_t current() const { return current_; }
  void set_current(std::size_t i) { current_ = i % options_.endpoints.size(); }
  boost::asio::io_context& io() { return io_; }

  // The Authorization header's value for a request to `ep` ("" without credentials): etcd's
  // token, got first when there is none yet or when `renew` (etcd refused the last one).
  // Fails with the worded reason; `refused` is set when etcd refused the user or password
  // (another endpoint would too). For the watch; post() uses it on its own.
  boost::asio::awaitable<Result<std::string>> auth_token(const Endpoint& ep, bool renew, CancelSignal& cancel,
                                                         bool& refused);

 private:
  boost::asio::io_context& io_;
  TransportOptions options_;
  std::size_t current_ = 0;
  std::string token_;  // etcd's auth token ("" = none yet)
};

// "etcd at 127.0.0.1:2379 (--rdzv-endpoint)": how every message names an endpoint.
std::string endpoint_label(const std::string& endpoint, const std::string& flag);
std::string seconds_text(std::chrono::milliseconds d);

}  // namespace ddplaunch::etcd
