// The JSON of etcd's v3 gateway (grpc-gateway's rendering of etcd's protobufs): bytes are
// base64, int64 are decimal strings, zero fields are left out, a stream's messages are
// wrapped in {"result": ...}. Request bodies built and responses read here, nowhere else.
// Pure: no sockets; unit-tested without etcd.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ddplaunch/base/result.h"
#include "etcd/types.h"

namespace ddplaunch::etcd::wire {

using Json = nlohmann::json;

std::string base64_encode(std::string_view bytes);
Result<std::string> base64_decode(std::string_view text);
// The range_end that makes a range cover every key starting with `prefix`.
std::string prefix_end(std::string_view prefix);

Json range_request(std::string_view key, bool prefix);
Json put_request(std::string_view key, std::string_view value, LeaseId lease);
Json delete_request(std::string_view key, bool prefix);
Json txn_request(const Txn& txn);
Json lease_grant_request(std::int64_t ttl_s);
Json lease_id_request(LeaseId id);  // keepalive, revoke
Json campaign_request(std::string_view election, std::string_view value, LeaseId lease);
Json leader_request(std::string_view election);
Json leader_key_request(const LeaderKey& key);                          // resign
Json proclaim_request(const LeaderKey& key, std::string_view value);
Json watch_create_request(std::string_view prefix, Revision start_revision);
Json authenticate_request(std::string_view user, std::string_view password);

// Responses. Each fails with a message naming the field when the JSON is not what etcd sends.
Result<RangeResult> parse_range(const Json& body);
Result<Revision> parse_header_revision(const Json& body);  // put, delete, revoke, proclaim, resign
Result<std::int64_t> parse_deleted(const Json& body);
Result<TxnResult> parse_txn(const Json& body);
Result<LeaseGrant> parse_lease_grant(const Json& body);
Result<std::int64_t> parse_keepalive_ttl(const Json& body);  // 0: the lease is gone
Result<LeaderKey> parse_campaign(const Json& body);
Result<KeyValue> parse_leader(const Json& body);
Result<std::string> parse_auth_token(const Json& body);  // /v3/auth/authenticate's "token"

// etcd refused the request's auth token (expired, or etcd restarted with simple tokens): gRPC
// Unauthenticated (16), or the text "invalid auth token". A new token may fix it.
bool token_refused(const Json& body);

// One message of a watch stream: events, or the stream's end (canceled / compacted).
struct WatchMessage {
  bool created = false;
  bool canceled = false;
  Revision compact_revision = 0;  // > 0: the start revision was compacted away
  std::string cancel_reason;
  Revision revision = 0;  // header revision
  std::vector<WatchEvent> events;
};
Result<WatchMessage> parse_watch_message(const Json& message);

// The gateway's error body {"error": "...", "code": N}: the text (or "" when absent), and
// the gRPC code (0 when absent).
std::string error_text(const Json& body);
int error_code(const Json& body);

// etcd's refusals that ddplaunch acts on or explains. etcd names them only in its error text
// (and sometimes a gRPC code), so this is the one place that reads that text.
enum class Refusal {
  Other,
  LeaseNotFound,        // "lease not found"
  AuthNeeded,           // "user name is empty": auth is on, no user given
  PermissionDenied,     // "permission denied"
  TokenRefused,         // gRPC 16 / "invalid auth token"
  AuthNotEnabled,       // "authentication is not enabled": credentials are not needed
  BadCredentials,       // "invalid user ID or password"
  TooManyTxnOps,        // "too many operations in txn"
  RequestTooLarge,      // "request is too large"
  RevisionCompacted,    // "required revision has been compacted"
};
Refusal classify_refusal(const std::string& error, int code = 0);
inline Refusal classify_refusal(const Json& body) { return classify_refusal(error_text(body), error_code(body)); }

}  // namespace ddplaunch::etcd::wire
