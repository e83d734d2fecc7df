// etcd v3 gateway JSON; see wire.h.
#include "etcd/wire.h"

#include <array>
#include <charconv>
#include <string_view>
#include <utility>

namespace ddplaunch::etcd::wire {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string number(std::int64_t n) { return std::to_string(n); }

// int64 fields come as decimal strings (proto3 JSON); numbers are accepted too. Absent: 0.
Result<std::int64_t> int64_field(const Json& obj, const char* name) {
  using R = Result<std::int64_t>;
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return R::success(0);
  if (it->is_number_integer()) return R::success(it->get<std::int64_t>());
  if (it->is_string()) {
    const auto& s = it->get_ref<const std::string&>();
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size()) return R::success(v);
  }
  return R::failure(std::string("field '") + name + "' is not an int64: " + it->dump());
}

Result<std::string> bytes_field(const Json& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return Result<std::string>::success("");
  if (!it->is_string())
    return Result<std::string>::failure(std::string("field '") + name + "' is not a string");
  auto bytes = base64_decode(it->get_ref<const std::string&>());
  if (!bytes) return Result<std::string>::failure(std::string("field '") + name + "': " + bytes.error);
  return bytes;
}

bool bool_field(const Json& obj, const char* name) {
  const auto it = obj.find(name);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

// Reads every listed int64 field into its target, or says which one was wrong.
template <std::size_t N>
std::string read_int64s(const Json& obj, const std::array<std::pair<const char*, std::int64_t*>, N>& fields) {
  for (const auto& [name, target] : fields) {
    auto v = int64_field(obj, name);
    if (!v) return v.error;
    *target = *v;
  }
  return {};
}

Result<KeyValue> parse_kv(const Json& obj) {
  using R = Result<KeyValue>;
  if (!obj.is_object()) return R::failure("a key-value is not an object");
  KeyValue kv;
  auto key = bytes_field(obj, "key");
  auto value = bytes_field(obj, "value");
  if (!key) return R::failure(key.error);
  if (!value) return R::failure(value.error);
  kv.key = *key;
  kv.value = *value;
  const auto bad = read_int64s<4>(obj, {{{"create_revision", &kv.create_revision},
                                         {"mod_revision", &kv.mod_revision},
                                         {"version", &kv.version},
                                         {"lease", &kv.lease}}});
  if (!bad.empty()) return R::failure(bad);
  return R::success(std::move(kv));
}

Result<Revision> header_revision(const Json& body) {
  const auto it = body.find("header");
  if (it == body.end() || !it->is_object()) return Result<Revision>::success(0);
  return int64_field(*it, "revision");
}

Json txn_op(const TxnOp& op) {
  switch (op.kind) {
    case TxnOp::Kind::Put:
      return {{"request_put", put_request(op.key, op.value, op.lease)}};
    case TxnOp::Kind::DeleteKey:
      return {{"request_delete_range", delete_request(op.key, false)}};
    case TxnOp::Kind::DeletePrefix:
      return {{"request_delete_range", delete_request(op.key, true)}};
  }
  return {};
}

Json compare(const Compare& c) {
  static constexpr const char* kTargets[] = {"CREATE", "MOD", "VERSION", "VALUE"};
  static constexpr const char* kResults[] = {"EQUAL", "NOT_EQUAL", "GREATER", "LESS"};
  Json j = {{"key", base64_encode(c.key)},
            {"target", kTargets[static_cast<int>(c.target)]},
            {"result", kResults[static_cast<int>(c.result)]}};
  switch (c.target) {
    case Compare::Target::CreateRevision: j["create_revision"] = number(c.number); break;
    case Compare::Target::ModRevision: j["mod_revision"] = number(c.number); break;
    case Compare::Target::Version: j["version"] = number(c.number); break;
    case Compare::Target::Value: j["value"] = base64_encode(c.value); break;
  }
  return j;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned n = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) | static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::string> base64_decode(std::string_view text) {
  using R = Result<std::string>;
  std::string out;
  unsigned acc = 0;
  int bits = 0;
  std::size_t padding = 0;
  for (const char c : text) {
    if (c == '=') {
      ++padding;
      continue;
    }
    // URL-safe letters too: grpc-gateway accepts both; etcd sends the standard ones.
    const char d = c == '-' ? '+' : c == '_' ? '/' : c;
    const auto pos = kAlphabet.find(d);
    if (pos == std::string_view::npos || padding > 0)
      return R::failure("invalid base64 character '" + std::string(1, c) + "'");
    acc = (acc << 6) | static_cast<unsigned>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if (padding > 2) return R::failure("invalid base64 padding");
  return R::success(std::move(out));
}

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key (etcd: range_end "\0" = to the end)
}

Json range_request(std::string_view key, bool prefix) {
  Json j = {{"key", base64_encode(key)}};
  if (prefix) j["range_end"] = base64_encode(prefix_end(key));
  return j;
}

Json put_request(std::string_view key, std::string_view value, LeaseId lease) {
  Json j = {{"key", base64_encode(key)}, {"value", base64_encode(value)}};
  if (lease != 0) j["lease"] = number(lease);
  return j;
}

Json delete_request(std::string_view key, bool prefix) { return range_request(key, prefix); }

Json txn_request(const Txn& txn) {
  Json j = {{"compare", Json::array()}, {"success", Json::array()}, {"failure", Json::array()}};
  for (const auto& c : txn.compare) j["compare"].push_back(compare(c));
  for (const auto& op : txn.success) j["success"].push_back(txn_op(op));
  for (const auto& op : txn.failure) j["failure"].push_back(txn_op(op));
  return j;
}

Json lease_grant_request(std::int64_t ttl_s) { return {{"TTL", number(ttl_s)}}; }
Json lease_id_request(LeaseId id) { return {{"ID", number(id)}}; }

Json campaign_request(std::string_view election, std::string_view value, LeaseId lease) {
  return {{"name", base64_encode(election)}, {"value", base64_encode(value)}, {"lease", number(lease)}};
}

Json leader_request(std::string_view election) { return {{"name", base64_encode(election)}}; }

Json leader_key_request(const LeaderKey& k) {
  return {{"leader",
           {{"name", base64_encode(k.name)},
            {"key", base64_encode(k.key)},
            {"rev", number(k.rev)},
            {"lease", number(k.lease)}}}};
}

Json proclaim_request(const LeaderKey& k, std::string_view value) {
  Json j = leader_key_request(k);
  j["value"] = base64_encode(value);
  return j;
}

Json watch_create_request(std::string_view prefix, Revision start_revision) {
  Json create = range_request(prefix, true);
  if (start_revision > 0) create["start_revision"] = number(start_revision);
  return {{"create_request", create}};
}

Result<RangeResult> parse_range(const Json& body) {
  using R = Result<RangeResult>;
  RangeResult out;
  auto rev = header_revision(body);
  auto count = int64_field(body, "count");
  if (!rev) return R::failure(rev.error);
  if (!count) return R::failure(count.error);
  out.revision = *rev;
  out.count = *count;
  if (const auto it = body.find("kvs"); it != body.end() && it->is_array()) {
    for (const auto& item : *it) {
      auto kv = parse_kv(item);
      if (!kv) return R::failure(kv.error);
      out.kvs.push_back(*kv);
    }
  }
  return R::success(std::move(out));
}

Result<Revision> parse_header_revision(const Json& body) { return header_revision(body); }
Result<std::int64_t> parse_deleted(const Json& body) { return int64_field(body, "deleted"); }

Result<TxnResult> parse_txn(const Json& body) {
  auto rev = header_revision(body);
  if (!rev) return Result<TxnResult>::failure(rev.error);
  return Result<TxnResult>::success({bool_field(body, "succeeded"), *rev});
}

Result<LeaseGrant> parse_lease_grant(const Json& body) {
  using R = Result<LeaseGrant>;
  LeaseGrant g;
  const auto bad = read_int64s<2>(body, {{{"ID", &g.id}, {"TTL", &g.ttl_s}}});
  if (!bad.empty()) return R::failure(bad);
  if (g.id == 0) return R::failure("no lease ID in the answer");
  return R::success(g);
}

Result<std::int64_t> parse_keepalive_ttl(const Json& body) { return int64_field(body, "TTL"); }

Result<LeaderKey> parse_campaign(const Json& body) {
  using R = Result<LeaderKey>;
  const auto it = body.find("leader");
  if (it == body.end() || !it->is_object()) return R::failure("no 'leader' in the answer");
  LeaderKey k;
  auto name = bytes_field(*it, "name");
  auto key = bytes_field(*it, "key");
  if (!name) return R::failure(name.error);
  if (!key) return R::failure(key.error);
  k.name = *name;
  k.key = *key;
  const auto bad = read_int64s<2>(*it, {{{"rev", &k.rev}, {"lease", &k.lease}}});
  if (!bad.empty()) return R::failure(bad);
  return R::success(std::move(k));
}

Result<KeyValue> parse_leader(const Json& body) {
  const auto it = body.find("kv");
  if (it == body.end() || !it->is_object()) return Result<KeyValue>::failure("no 'kv' in the answer");
  return parse_kv(*it);
}

Result<WatchMessage> parse_watch_message(const Json& message) {
  using R = Result<WatchMessage>;
  WatchMessage m;
  m.created = bool_field(message, "created");
  m.canceled = bool_field(message, "canceled");
  if (const auto it = message.find("cancel_reason"); it != message.end() && it->is_string())
    m.cancel_reason = it->get<std::string>();
  auto compact = int64_field(message, "compact_revision");
  auto rev = header_revision(message);
  if (!compact) return R::failure(compact.error);
  if (!rev) return R::failure(rev.error);
  m.compact_revision = *compact;
  m.revision = *rev;
  if (const auto it = message.find("events"); it != message.end() && it->is_array()) {
    for (const auto& e : *it) {
      WatchEvent ev;
      const auto type = e.find("type");
      ev.type = type != e.end() && type->is_string() && *type == "DELETE" ? WatchEvent::Type::Delete
                                                                          : WatchEvent::Type::Put;
      const auto kv = e.find("kv");
      if (kv == e.end()) return R::failure("a watch event without 'kv'");
      auto parsed = parse_kv(*kv);
      if (!parsed) return R::failure(parsed.error);
      ev.kv = std::move(*parsed.value);
      m.events.push_back(std::move(ev));
    }
  }
  return R::success(std::move(m));
}

Json authenticate_request(std::string_view user, std::string_view password) {
  return Json{{"name", std::string(user)}, {"password", std::string(password)}};
}

Result<std::string> parse_auth_token(const Json& body) {
  const auto it = body.is_object() ? body.find("token") : body.end();
  if (it == body.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
    return Result<std::string>::failure("no 'token' in the answer to authenticate");
  return Result<std::string>::success(it->get<std::string>());
}

bool token_refused(const Json& body) { return classify_refusal(body) == Refusal::TokenRefused; }

std::string error_text(const Json& body) {
  if (!body.is_object()) return {};
  for (const char* field : {"error", "message"}) {
    const auto it = body.find(field);
    if (it != body.end() && it->is_string()) return it->get<std::string>();
    if (it != body.end() && it->is_object()) return error_text(*it);  // a stream's {"error": {...}}
  }
  return {};
}

int error_code(const Json& body) {
  if (!body.is_object()) return 0;
  if (const auto it = body.find("code"); it != body.end() && it->is_number_integer()) return it->get<int>();
  if (const auto it = body.find("error"); it != body.end() && it->is_object()) return error_code(*it);
  return 0;
}

Refusal classify_refusal(const std::string& error, int code) {
  constexpr int kGrpcUnauthenticated = 16;
  if (code == kGrpcUnauthenticated) return Refusal::TokenRefused;
  static constexpr std::pair<std::string_view, Refusal> kTexts[] = {
      {"lease not found", Refusal::LeaseNotFound},
      {"user name is empty", Refusal::AuthNeeded},
      {"permission denied", Refusal::PermissionDenied},
      {"invalid auth token", Refusal::TokenRefused},
      {"authentication is not enabled", Refusal::AuthNotEnabled},
      {"invalid user ID or password", Refusal::BadCredentials},
      {"too many operations in txn", Refusal::TooManyTxnOps},
      {"request is too large", Refusal::RequestTooLarge},
      {"required revision has been compacted", Refusal::RevisionCompacted},
  };
  for (const auto& [text, refusal] : kTexts)
    if (error.find(text) != std::string::npos) return refusal;
  return Refusal::Other;
}

}  // namespace ddplaunch::etcd::wire
