// The etcd client's operations: request JSON in, typed values out; see client.h.
#include "etcd/client.h"

#include <boost/asio/io_context.hpp>

namespace ddplaunch::etcd {
namespace {

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

// The likely cause of etcd's best-known refusals, for the person at the terminal.
std::string likely_cause(wire::Refusal refusal) {
  using wire::Refusal;
  switch (refusal) {
    case Refusal::LeaseNotFound:
      return "the lease expired or was revoked: its keepalive stopped for longer than its TTL";
    case Refusal::AuthNeeded:
      return "etcd has authentication enabled: give --rdzv-conf username=NAME with password_file=PATH or "
             "DDPLAUNCH_ETCD_PASSWORD";
    case Refusal::PermissionDenied:
      return "the etcd user lacks the permission: grant it a role with read-write access to /ddplaunch/";
    case Refusal::TokenRefused:
      return "etcd refused the auth token, also a fresh one";
    case Refusal::TooManyTxnOps:
      return "etcd's --max-txn-ops (128 by default) is lower than this transaction";
    case Refusal::RequestTooLarge:
      return "the value exceeds etcd's --max-request-bytes (1.5 MiB by default)";
    case Refusal::RevisionCompacted:
      return "etcd compacted that revision away: read the current state again";
    case Refusal::Other:
    case Refusal::AuthNotEnabled:
    case Refusal::BadCredentials:
      return {};
  }
  return {};
}

}  // namespace

std::string describe_refusal(const std::string& endpoint, const std::string& flag, const std::string& what,
                             unsigned status, const wire::Json& body) {
  std::string error = wire::error_text(body);
  if (error.empty()) {
    error = "HTTP " + std::to_string(status);
    if (status == 404 || status == 405 || status == 501)
      error += ": no v3 JSON gateway here; is it etcd 3.4 or newer, at its client port?";
  }
  std::string out = endpoint_label(endpoint, flag) + " refused " + what + ": " + error;
  if (const auto cause = likely_cause(wire::classify_refusal(error, wire::error_code(body))); !cause.empty()) out += " (" + cause + ")";
  return out;
}

Result<std::shared_ptr<Client>> Client::create(boost::asio::io_context& io, ClientOptions options) {
  using R = Result<std::shared_ptr<Client>>;
  if (options.endpoints.empty())
    return R::failure(options.flag + " names no etcd endpoint: give HOST:2379[,HOST:2379...]");
  if (options.credentials.user.empty() && !options.credentials.password.empty())
    return R::failure("an etcd password is given without a user: add --rdzv-conf username=NAME");
  std::shared_ptr<const TlsContext> tls;
  if (options.tls) {
    auto context = make_tls_context(options.tls_files);
    if (!context) return R::failure("TLS to etcd: " + context.error);
    tls = std::move(*context);
  }
  return R::success(std::shared_ptr<Client>(new Client(io, std::move(options), std::move(tls))));
}

Client::Client(boost::asio::io_context& io, ClientOptions options, std::shared_ptr<const TlsContext> tls)
    : options_(std::move(options)),
      transport_(io, TransportOptions{options_.endpoints, options_.flag, options_.connect_timeout, std::move(tls),
                                      options_.credentials}) {}

template <typename T, typename Parse>
void Client::call(std::string what, std::string target, wire::Json body, Parse parse, Callback<T> done,
                  std::chrono::milliseconds timeout, std::shared_ptr<CancelSignal> cancel) {
  GatewayCall gc{what, std::move(target), body.dump(),
                 timeout.count() > 0 ? timeout : options_.request_timeout, !cancel};
  auto self = shared_from_this();
  transport_.post(std::move(gc), std::move(cancel),
                  [self, what, parse = std::move(parse), done = std::move(done)](Result<GatewayAnswer> answer) {
                    if (!answer) return done(Result<T>::failure(answer.error));
                    const auto& a = *answer;
                    if (a.status != 200 || (a.body.is_object() && a.body.contains("error")))
                      return done(Result<T>::failure(
                          describe_refusal(a.endpoint, self->options_.flag, what, a.status, a.body)));
                    Result<T> parsed = parse(a.body);
                    if (!parsed)
                      parsed.error = endpoint_label(a.endpoint, self->options_.flag) + ": the answer to " + what +
                                     " is not what etcd sends: " + parsed.error;
                    done(std::move(parsed));
                  });
}

void Client::get(std::string key, Callback<RangeResult> done) {
  call("get " + in_quotes(key), "/v3/kv/range", wire::range_request(key, false), wire::parse_range, std::move(done));
}

void Client::get_prefix(std::string prefix, Callback<RangeResult> done) {
  call("get prefix " + in_quotes(prefix), "/v3/kv/range", wire::range_request(prefix, true), wire::parse_range,
       std::move(done));
}

void Client::put(std::string key, std::string value, LeaseId lease, Callback<Revision> done) {
  call("put " + in_quotes(key), "/v3/kv/put", wire::put_request(key, value, lease), wire::parse_header_revision,
       std::move(done));
}

void Client::erase(std::string key, Callback<std::int64_t> done) {
  call("delete " + in_quotes(key), "/v3/kv/deleterange", wire::delete_request(key, false), wire::parse_deleted,
       std::move(done));
}

void Client::erase_prefix(std::string prefix, Callback<std::int64_t> done) {
  call("delete prefix " + in_quotes(prefix), "/v3/kv/deleterange", wire::delete_request(prefix, true),
       wire::parse_deleted, std::move(done));
}

void Client::txn(Txn txn, Callback<TxnResult> done) {
  std::string what = "transaction";
  if (!txn.compare.empty()) what += " on " + in_quotes(txn.compare.front().key);
  call(what, "/v3/kv/txn", wire::txn_request(txn), wire::parse_txn, std::move(done));
}

void Client::grant_lease(std::chrono::seconds ttl, Callback<LeaseGrant> done) {
  call("grant a lease of " + std::to_string(ttl.count()) + " s", "/v3/lease/grant", wire::lease_grant_request(ttl.count()),
       wire::parse_lease_grant, std::move(done));
}

void Client::keep_alive_once(LeaseId lease, Callback<std::int64_t> done) {
  call("keepalive of lease " + std::to_string(lease), "/v3/lease/keepalive", wire::lease_id_request(lease),
       wire::parse_keepalive_ttl, std::move(done));
}

void Client::revoke_lease(LeaseId lease, Callback<Revision> done) {
  call("revoke lease " + std::to_string(lease), "/v3/lease/revoke", wire::lease_id_request(lease),
       wire::parse_header_revision, std::move(done));
}

void Client::campaign(std::string election, std::string value, LeaseId lease, std::chrono::milliseconds wait,
                      std::shared_ptr<CancelSignal> cancel, Callback<LeaderKey> done) {
  if (!cancel) cancel = std::make_shared<CancelSignal>();
  call("campaign for leadership of " + in_quotes(election), "/v3/election/campaign",
       wire::campaign_request(election, value, lease), wire::parse_campaign, std::move(done), wait, std::move(cancel));
}

void Client::leader(std::string election, Callback<std::optional<KeyValue>> done) {
  using R = Result<std::optional<KeyValue>>;
  const std::string what = "leader of " + in_quotes(election);
  call<KeyValue>(what, "/v3/election/leader", wire::leader_request(election), wire::parse_leader,
                 [done = std::move(done)](Result<KeyValue> r) {
                   if (r) return done(R::success(*r));
                   // etcd answers "no leader" as an error; here it is a value.
                   if (r.error.find("election: no leader") != std::string::npos) return done(R::success(std::nullopt));
                   done(R::failure(r.error));
                 });
}

void Client::proclaim(LeaderKey key, std::string value, Callback<Revision> done) {
  call("proclaim in " + in_quotes(key.name), "/v3/election/proclaim", wire::proclaim_request(key, value),
       wire::parse_header_revision, std::move(done));
}

void Client::resign(LeaderKey key, Callback<Revision> done) {
  call("resign from " + in_quotes(key.name), "/v3/election/resign", wire::leader_key_request(key),
       wire::parse_header_revision, std::move(done));
}

}  // namespace ddplaunch::etcd
