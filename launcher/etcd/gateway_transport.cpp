// One POST with failover over the endpoint list; see gateway_transport.h.
#include "etcd/gateway_transport.h"

#include <cstdio>

#include "etcd/one_post.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace ddplaunch::etcd {
namespace asio = boost::asio;
using detail::Attempt;

namespace {

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
      // With credentials: a token first, and once more when etcd refuses it (expired).
      bool refused = false;
      Attempt a;
      for (bool renew : {false, true}) {
        auto token = co_await auth_token(ep, renew, *cancel, refused);
        if (!token) {
          a = Attempt{cancel->cancelled() ? Attempt::Kind::Cancelled : Attempt::Kind::Failed, 0, {}, token.error};
          break;
        }
        a = co_await detail::post_once(ep, call, options_.connect_timeout, options_.tls.get(), *token, *cancel);
        const bool token_refused = a.kind == Attempt::Kind::Answered && !token->empty() &&
                                   wire::token_refused(wire::Json::parse(a.body, nullptr, false));
        if (!token_refused) break;
      }
      if (refused) {  // a wrong user or password: every member would say the same
        done(Result<GatewayAnswer>::failure(endpoint_label(ep.text(), options_.flag) + ": " + a.why));
        co_return;
      }
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
        if (body.is_discarded() && a.body.find("HTTP request to an HTTPS server") != std::string::npos) {
          failures.push_back(ep.text() + ": it serves TLS (https), and this request was plain http: give --rdzv-conf "
                                         "protocol=https,cacert=CA.pem (or https:// in " + options_.flag + ")");
          continue;
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
