// etcd's auth token for a transport with credentials: POST /v3/auth/authenticate
// {"name","password"} → {"token"}, sent as the Authorization header of every request after;
// see GatewayTransport::auth_token.
#include "etcd/gateway_transport.h"
#include "etcd/one_post.h"

namespace ddplaunch::etcd {
namespace asio = boost::asio;

asio::awaitable<Result<std::string>> GatewayTransport::auth_token(const Endpoint& ep, bool renew, CancelSignal& cancel,
                                                                  bool& refused) {
  using R = Result<std::string>;
  refused = false;
  const Credentials& who = options_.credentials;
  if (who.user.empty()) co_return R::success("");
  if (!token_.empty() && !renew) co_return R::success(token_);
  token_.clear();
  const GatewayCall call{"authenticate as user '" + who.user + "'", "/v3/auth/authenticate",
                         wire::authenticate_request(who.user, who.password).dump(), std::chrono::milliseconds(5000)};
  auto a = co_await detail::post_once(ep, call, options_.connect_timeout, options_.tls.get(), "", cancel);
  if (a.kind != detail::Attempt::Kind::Answered) co_return R::failure(a.why);
  const auto body = wire::Json::parse(a.body, nullptr, false);
  auto token = wire::parse_auth_token(body);
  if (!token) {
    const std::string error = wire::error_text(body);
    const wire::Refusal refusal = wire::classify_refusal(error, wire::error_code(body));
    if (refusal == wire::Refusal::AuthNotEnabled) {
      co_return R::success("");  // etcd without --auth: the credentials are not needed
    }
    refused = true;
    std::string why = call.what + " failed: " + (error.empty() ? "HTTP " + std::to_string(a.status) : error);
    if (refusal == wire::Refusal::BadCredentials)
      why += " (check the password in " + who.password_source + " and the user name: --rdzv-conf username=" +
             who.user + ")";
    co_return R::failure(why);
  }
  token_ = *token;
  co_return R::success(token_);
}

}  // namespace ddplaunch::etcd
