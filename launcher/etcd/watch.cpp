// The streamed prefix watch and its reconnects; see watch.h.
#include "etcd/watch.h"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "etcd/gateway_stream.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace ddplaunch::etcd {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// A stream may be silent for hours: a peer that vanished without a FIN or RST is found by
// TCP keepalive within about 5 + 3 × 2 s.
void keep_probing(asio::ip::tcp::socket& s) {
  boost::system::error_code ec;
  s.set_option(asio::socket_base::keep_alive(true), ec);
  const int idle = 5, interval = 2, count = 3;
  ::setsockopt(s.native_handle(), IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(s.native_handle(), IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(s.native_handle(), IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

}  // namespace

// The watch's coroutine: streams from one endpoint after another until stopped or ended.
// Static, with the watch as a parameter: a coroutine's parameters live in its frame.
struct WatchRun {
  // One stream from `ep`: returns why it broke. `streaming` is set once etcd created the watch;
  // `renew_token` asks for a new auth token (set when etcd refused the last one).
  static asio::awaitable<std::string> stream_once(std::shared_ptr<PrefixWatch> w, const Endpoint& ep, bool& streaming,
                                                  bool& renew_token) {
    const auto& opts = w->client_->options();
    auto& transport = w->client_->transport();
    bool refused = false;
    const auto token = co_await transport.auth_token(ep, renew_token, *w->cancel_, refused);
    renew_token = false;
    if (!token) co_return token.error;
    detail::GatewayStream stream(co_await asio::this_coro::executor, transport.options().tls.get());
    w->cancel_->on_cancel([&stream] { stream.tcp().cancel(); });
    struct Clear {
      CancelSignal& c;
      ~Clear() { c.on_cancel({}); }
    } clear{*w->cancel_};
    auto why = co_await stream.connect(ep, opts.connect_timeout);
    if (!why.empty()) co_return why;

    boost::system::error_code ec;
    stream.tcp().expires_after(opts.request_timeout);
    auto req = detail::json_post(ep, "/v3/watch", wire::watch_create_request(w->prefix_, w->next_revision_).dump(),
                                 *token);
    co_await http::async_write(stream, req, asio::redirect_error(asio::use_awaitable, ec));
    beast::flat_buffer buffer;
    http::response_parser<http::empty_body> parser;
    parser.body_limit(boost::none);
    if (!ec) co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return stream.describe(ec, ep, detail::Step::Answer, opts.request_timeout);
    if (parser.get().result_int() != 200)
      co_return "HTTP " + std::to_string(parser.get().result_int()) + " to /v3/watch: is it etcd 3.4 or newer?";
    stream.tcp().expires_never();
    keep_probing(stream.tcp().socket());

    std::string pending;
    auto on_chunk = [&pending](std::uint64_t, beast::string_view body, boost::system::error_code&) {
      pending.append(body.data(), body.size());
      return body.size();
    };
    parser.on_chunk_body(on_chunk);  // kept by reference: it lives as long as this frame
    while (!parser.is_done()) {
      co_await http::async_read_some(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return stream.describe(ec, ep, detail::Step::Answer, opts.request_timeout);
      for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
        const std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
        auto json = wire::Json::parse(line, nullptr, false);
        if (json.is_object() && json.contains("error")) {
          renew_token = wire::token_refused(json);
          co_return "etcd ended the stream: " + wire::error_text(json);
        }
        if (json.is_object() && json.contains("result")) json = json["result"];
        auto msg = wire::parse_watch_message(json);
        if (!msg) co_return "a watch message is not what etcd sends: " + msg.error;
        if (msg->compact_revision > 0) {
          w->end("etcd compacted revision " + std::to_string(w->next_revision_) + " away (compacted up to " +
                 std::to_string(msg->compact_revision) + "): read the prefix '" + w->prefix_ + "' again and watch anew");
          co_return "compacted";
        }
        if (msg->canceled) {
          renew_token = wire::classify_refusal(msg->cancel_reason) == wire::Refusal::TokenRefused;
          co_return "etcd canceled the watch: " + msg->cancel_reason;
        }
        if (msg->created && !streaming) {
          streaming = true;
          ++w->streams_opened_;
          w->client_->transport().set_current(&ep - w->client_->options().endpoints.data());
        }
        if (!msg->events.empty()) {
          w->next_revision_ = msg->events.back().kv.mod_revision + 1;
          w->on_events_(msg->events, msg->revision);
          if (w->finished_) co_return "stopped";
        }
      }
    }
    co_return std::string("etcd ended the stream");
  }

  static asio::awaitable<void> run(std::shared_ptr<PrefixWatch> w) {
    const auto& eps = w->client_->options().endpoints;
    std::size_t index = w->client_->transport().current();
    auto down_since = std::chrono::steady_clock::now();
    std::string last_error;
    bool renew_token = false;
    while (!w->finished_) {
      bool streaming = false;
      const auto why = co_await stream_once(w, eps[index], streaming, renew_token);
      if (w->finished_) co_return;
      if (streaming) down_since = std::chrono::steady_clock::now();
      last_error = eps[index].text() + ": " + why;
      const auto down = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - down_since);
      if (down >= w->options_.reconnect_bound) {
        w->end("lost the watch of '" + w->prefix_ + "': no etcd endpoint of " + w->client_->options().flag +
               " streamed for " + seconds_text(down) + "; last error: " + last_error);
        co_return;
      }
      if (!streaming) index = (index + 1) % eps.size();
      w->pause_.expires_after(w->options_.retry_pause);
      boost::system::error_code ec;
      co_await w->pause_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }
};

std::shared_ptr<PrefixWatch> PrefixWatch::start(std::shared_ptr<Client> client, std::string prefix,
                                                Revision start_revision, OnEvents on_events, OnEnd on_end,
                                                Options options) {
  auto w = std::shared_ptr<PrefixWatch>(new PrefixWatch(std::move(client), std::move(prefix), start_revision,
                                                        std::move(on_events), std::move(on_end), options));
  asio::co_spawn(w->client_->transport().io(), WatchRun::run(w), asio::detached);
  return w;
}

PrefixWatch::PrefixWatch(std::shared_ptr<Client> client, std::string prefix, Revision start_revision,
                         OnEvents on_events, OnEnd on_end, Options options)
    : client_(std::move(client)),
      prefix_(std::move(prefix)),
      next_revision_(start_revision),
      on_events_(std::move(on_events)),
      on_end_(std::move(on_end)),
      options_(options),
      pause_(client_->transport().io()) {}

void PrefixWatch::stop() {
  finished_ = true;
  on_end_ = nullptr;
  pause_.cancel();
  cancel_->cancel();
}

void PrefixWatch::end(std::string why) {
  finished_ = true;
  if (auto report = std::move(on_end_)) report(why);
}

}  // namespace ddplaunch::etcd
