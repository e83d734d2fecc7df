// For the etcd client's tests: run the io_context until one asynchronous call completes,
// bounded, and the client options of a test.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "etcd/client.h"

namespace ddplaunch::testing {

// In a fixture with an io_context `io_`: `AWAIT(Revision, client->put("k", "v", 0, cb))`.
#define AWAIT(T, call) await_result<T>(io_, [&](etcd::Callback<T> cb) { call; })

// Runs `io` until the call started by `start(callback)` completes or `bound` passes.
template <typename T, typename Start>
Result<T> await_result(boost::asio::io_context& io, Start start,
                       std::chrono::milliseconds bound = std::chrono::seconds(30)) {
  auto out = std::make_shared<std::optional<Result<T>>>();
  start([out](Result<T> r) { *out = std::move(r); });
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!*out && std::chrono::steady_clock::now() < deadline) {
    if (io.stopped()) io.restart();
    if (io.run_one_for(std::chrono::milliseconds(50)) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!*out) return Result<T>::failure("test: no completion within " + std::to_string(bound.count()) + " ms");
  return std::move(**out);
}

// Runs `io` for `d` (timers, keepalives) while the test waits.
inline void run_for(boost::asio::io_context& io, std::chrono::milliseconds d) {
  const auto deadline = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < deadline) {
    if (io.stopped()) io.restart();
    if (io.run_one_until(deadline) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Runs `io` until `done()` or `bound`; true when done.
template <typename Pred>
bool run_until(boost::asio::io_context& io, Pred done, std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    if (io.stopped()) io.restart();
    if (io.run_one_for(std::chrono::milliseconds(50)) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

inline std::shared_ptr<etcd::Client> make_client(boost::asio::io_context& io, const std::string& endpoints,
                                                 std::chrono::milliseconds request_timeout = std::chrono::seconds(5)) {
  auto eps = etcd::parse_endpoints(endpoints, "--rdzv-endpoint");
  if (!eps) return nullptr;
  etcd::ClientOptions o;
  o.endpoints = *eps;
  o.request_timeout = request_timeout;
  o.connect_timeout = std::chrono::seconds(2);
  auto c = etcd::Client::create(io, o);
  return c ? *c : nullptr;
}

}  // namespace ddplaunch::testing
