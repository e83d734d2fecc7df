// The etcd v3 client the job's coordinator uses: key-value (range, put, delete, txn), leases,
// elections, over etcd's JSON gateway (gateway_transport.h) on the caller's io_context.
// Knows no processes and decides nothing. Every call completes once, on the io_context,
// never inside the call and never unbounded: with a value, or an error that names the
// endpoint, what failed and the likely cause.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/base/result.h"
#include "etcd/endpoints.h"
#include "etcd/gateway_transport.h"
#include "etcd/types.h"

namespace ddplaunch::etcd {

template <typename T>
using Callback = std::function<void(Result<T>)>;

struct ClientOptions {
  std::vector<Endpoint> endpoints;       // from parse_endpoints
  std::string flag = "--rdzv-endpoint";  // where they came from, for messages
  std::chrono::milliseconds connect_timeout{3000};  // the TCP connect and the TLS handshake
  std::chrono::milliseconds request_timeout{5000};  // an answer's bound, per endpoint
  bool tls = false;                      // https: the server's certificate checked against tls_files.cacert
  TlsFiles tls_files;
  Credentials credentials;               // etcd's user/password authentication; user "" = none
};

class PrefixWatch;

class Client : public std::enable_shared_from_this<Client> {
 public:
  // Refused: no endpoints, a TLS file that cannot be read or is not what its key says, a
  // password without a user. Builds the TLS context (the only place OpenSSL starts) once.
  static Result<std::shared_ptr<Client>> create(boost::asio::io_context& io, ClientOptions options);

  // Key-value. A missing key is an empty RangeResult, not an error.
  void get(std::string key, Callback<RangeResult> done);
  void get_prefix(std::string prefix, Callback<RangeResult> done);
  void put(std::string key, std::string value, LeaseId lease, Callback<Revision> done);
  void erase(std::string key, Callback<std::int64_t> done);  // how many keys were deleted
  void erase_prefix(std::string prefix, Callback<std::int64_t> done);
  // A compare that does not hold is TxnResult{succeeded = false}, not an error.
  void txn(Txn txn, Callback<TxnResult> done);

  // Leases. keep_alive_once answers the TTL left (0: the lease is gone: expired or revoked);
  // for a periodic keepalive that reports loss, see LeaseKeeper.
  void grant_lease(std::chrono::seconds ttl, Callback<LeaseGrant> done);
  void keep_alive_once(LeaseId lease, Callback<std::int64_t> done);
  void revoke_lease(LeaseId lease, Callback<Revision> done);

  // Elections. campaign completes when this lease's candidate leads `election`, or fails when
  // `wait` passes or `cancel` is signalled (etcd then withdraws the candidacy).
  void campaign(std::string election, std::string value, LeaseId lease, std::chrono::milliseconds wait,
                std::shared_ptr<CancelSignal> cancel, Callback<LeaderKey> done);
  // The current leader's key and value; nullopt when the election has none.
  void leader(std::string election, Callback<std::optional<KeyValue>> done);
  void proclaim(LeaderKey key, std::string value, Callback<Revision> done);
  void resign(LeaderKey key, Callback<Revision> done);

  const ClientOptions& options() const { return options_; }
  GatewayTransport& transport() { return transport_; }

 private:
  Client(boost::asio::io_context& io, ClientOptions options, std::shared_ptr<const TlsContext> tls);
  template <typename T, typename Parse>
  void call(std::string what, std::string target, wire::Json body, Parse parse, Callback<T> done,
            std::chrono::milliseconds timeout = {}, std::shared_ptr<CancelSignal> cancel = {});

  ClientOptions options_;
  GatewayTransport transport_;
};

// A refused request worded: "etcd at H:P (--rdzv-endpoint) refused put 'k': <etcd's error>
// (<likely cause>)". Exposed for the tests.
std::string describe_refusal(const std::string& endpoint, const std::string& flag, const std::string& what,
                             unsigned status, const wire::Json& body);

}  // namespace ddplaunch::etcd
