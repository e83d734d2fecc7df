// `ddplaunch status` and the other one-shot queries: a short-lived connection that proves the
// token, checks the master's proof, asks and returns the answer (a QuerySession the master
// does not hold). Bounded by the caller's timeout.
#include "ddplaunch/rendezvous/client.h"
#include "ddplaunch/rendezvous/query_session.h"

namespace ddplaunch::rendezvous {

std::string query_status(const std::string& host, std::uint16_t port, std::string job_id,
                         std::string token, std::chrono::milliseconds timeout, QueryFailure& failure) {
  return query_master(host, port, std::move(job_id), std::move(token), "", timeout, failure);
}

std::string query_master(const std::string& host, std::uint16_t port, std::string job_id, std::string token,
                         const std::string& query, std::chrono::milliseconds timeout, QueryFailure& failure) {
  QuerySession session(host, port, std::move(job_id), std::move(token), /*held=*/false);
  return session.ask(query, failure, timeout).text;
}

}  // namespace ddplaunch::rendezvous
