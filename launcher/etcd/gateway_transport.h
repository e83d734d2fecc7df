// One POST to etcd's v3 JSON gateway over HTTP/1.1 (Boost.Beast) on the caller's io_context:
// to the current endpoint, and on a connection error or timeout to the next one of the list,
// each endpoint at most once per request. Every attempt is bounded (connect and answer);
// the answer is handed back as it came (status + JSON), the failures worded for the person
// at the terminal: which endpoint, what failed, why it likely failed.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "ddplaunch/base/result.h"
#include "etcd/endpoints.h"
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

struct TransportOptions {
  std::vector<Endpoint> endpoints;
  std::string flag = "--rdzv-endpoint";  // where the endpoints came from, for messages
  std::chrono::milliseconds connect_timeout{3000};
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

 private:
  boost::asio::io_context& io_;
  TransportOptions options_;
  std::size_t current_ = 0;
};

// "etcd at 127.0.0.1:2379 (--rdzv-endpoint)": how every message names an endpoint.
std::string endpoint_label(const std::string& endpoint, const std::string& flag);
std::string seconds_text(std::chrono::milliseconds d);

}  // namespace ddplaunch::etcd
