// QuerySession: the asking end of an inspection connection (`ddplaunch status --watch`, tail,
// debug). It connects and proves the job's token once, then asks query after query over the
// same connection; a query may wait at the master until its answer differs from the last one
// (answer_digest). Blocking, on a private io_context, each ask bounded: never call it from
// inside a running event loop. A dropped connection is reported; the next ask opens a new one.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "ddplaunch/rendezvous/client.h"

namespace ddplaunch::rendezvous {

struct QueryAnswer {
  std::string text;    // the master's answer ("" on failure)
  std::string digest;  // names this answer: pass it as `unless` to wait for a different one
};

// How long a query may wait at the master for its answer to change.
struct QueryWait {
  std::string unless;                   // the digest of the answer already had ("": answer at once)
  std::chrono::milliseconds at_most{0};  // the master answers by then whatever it has (it caps this)
};

class QuerySession {
 public:
  // `held`: the master keeps the connection for further queries (false: one query, as
  // query_master asks).
  QuerySession(std::string host, std::uint16_t port, std::string job_id, std::string token, bool held = true);
  ~QuerySession();
  QuerySession(const QuerySession&) = delete;
  QuerySession& operator=(const QuerySession&) = delete;

  // The master's answer to `query` ("": the status text). `bound`: for the connection and the
  // answer, on top of the wait. On failure returns an empty answer and sets `failure`.
  QueryAnswer ask(const std::string& query, QueryFailure& failure, std::chrono::milliseconds bound,
                  const QueryWait& wait = {});
  // How many connections this session opened (1 while the master kept the first).
  std::size_t connections_opened() const;
  std::string where() const;  // "host:port"

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ddplaunch::rendezvous
