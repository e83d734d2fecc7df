// The values the etcd client hands back and takes: keys and values as raw bytes in
// std::string (base64 is the wire's business), revisions and lease ids as int64 (etcd's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddplaunch::etcd {

using LeaseId = std::int64_t;  // 0: no lease
using Revision = std::int64_t;

struct KeyValue {
  std::string key;
  std::string value;
  Revision create_revision = 0;  // revision of the put that created the key (0: absent)
  Revision mod_revision = 0;
  std::int64_t version = 0;  // number of puts since creation
  LeaseId lease = 0;
};

struct RangeResult {
  Revision revision = 0;  // the store's revision when read (watch from revision + 1)
  std::vector<KeyValue> kvs;
  std::int64_t count = 0;
};

struct LeaseGrant {
  LeaseId id = 0;
  std::int64_t ttl_s = 0;
};

// The key an election campaign won: the proof of leadership (fencing: compare on
// `key`'s create_revision == `rev`), and what proclaim and resign need.
struct LeaderKey {
  std::string name;  // the election
  std::string key;   // name + "/" + lease in hex
  Revision rev = 0;  // the key's create_revision
  LeaseId lease = 0;
};

// One comparison of a transaction: `key`'s target <result> the operand.
struct Compare {
  enum class Target { CreateRevision, ModRevision, Version, Value };
  enum class Result { Equal, NotEqual, Greater, Less };
  std::string key;
  Target target = Target::CreateRevision;
  Result result = Result::Equal;
  std::int64_t number = 0;  // create/mod revision or version
  std::string value;        // Target::Value

  static Compare create_revision(std::string key, Revision r) {
    return {std::move(key), Target::CreateRevision, Result::Equal, r, {}};
  }
  static Compare mod_revision(std::string key, Revision r) {
    return {std::move(key), Target::ModRevision, Result::Equal, r, {}};
  }
  static Compare version(std::string key, std::int64_t v) {
    return {std::move(key), Target::Version, Result::Equal, v, {}};
  }
  static Compare value_is(std::string key, std::string v) {
    return {std::move(key), Target::Value, Result::Equal, 0, std::move(v)};
  }
  static Compare absent(std::string key) { return create_revision(std::move(key), 0); }
  // Fencing: "only while my leader key still exists as the one I won".
  static Compare still_leader(const LeaderKey& k) { return create_revision(k.key, k.rev); }
};

// One write of a transaction's branch.
struct TxnOp {
  enum class Kind { Put, DeleteKey, DeletePrefix };
  Kind kind = Kind::Put;
  std::string key;    // the key, or the prefix of DeletePrefix
  std::string value;  // Put
  LeaseId lease = 0;  // Put: 0 = none

  static TxnOp put(std::string key, std::string value, LeaseId lease = 0) {
    return {Kind::Put, std::move(key), std::move(value), lease};
  }
  static TxnOp erase(std::string key) { return {Kind::DeleteKey, std::move(key), {}, 0}; }
  static TxnOp erase_prefix(std::string prefix) { return {Kind::DeletePrefix, std::move(prefix), {}, 0}; }
};

// If every compare holds, the success writes are applied, else the failure writes; atomically.
struct Txn {
  std::vector<Compare> compare;
  std::vector<TxnOp> success;
  std::vector<TxnOp> failure;
};

struct TxnResult {
  bool succeeded = false;  // every compare held
  Revision revision = 0;
};

struct WatchEvent {
  enum class Type { Put, Delete };
  Type type = Type::Put;
  KeyValue kv;  // for Delete: key and mod_revision only
};

}  // namespace ddplaunch::etcd
