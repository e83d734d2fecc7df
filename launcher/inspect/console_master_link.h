// How the inspection commands (`ddplaunch debug`, and status, tail, stacks, timeline through
// inspect/) ask the job's master: one held connection that proved the job's token once
// (rendezvous/query_session.h), typed queries and replies (wire/inspection_messages.h). A
// connection that drops or goes unanswered is common while the job runs (a master busy with
// many clients closes new ones at once), so a query is asked again, on a new connection, a few
// times over a few seconds before the master is taken for gone; a master that said no (a
// refused token, not this job's master, a refused query) is told apart from one that is gone.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "ddplaunch/base/result.h"
#include "ddplaunch/rendezvous/query_session.h"
#include "wire/inspection_messages.h"

namespace ddplaunch {

struct RemoteConsoleTarget;

class ConsoleMasterLink {
 public:
  // What a query may be asked again after: a read after anything (it changes nothing), a typed
  // line only when the master cannot have carried it out (it never answered: asked again, a
  // `next` would step twice).
  enum class Repeat { AfterAnyDrop, OnlyWhereNotCarriedOut };
  // Why the last ask has no reply, for the caller's decisions (the error says it for people).
  enum class Failure {
    None,
    Refused,      // the master said no, or is not the job's master
    Unreachable,  // no master answered at the first ask: none runs there (or not yet)
    Gone,         // it answered before, and no longer: the job has ended (or its master is unreachable)
    Unsure,       // a line's query went unanswered: it may or may not have been carried out
  };

  explicit ConsoleMasterLink(const RemoteConsoleTarget& target);
  // The master's reply. Its error: why there is none (printable), a refused reply's words included.
  // `wait`: the master may hold the answer until it differs from its last answer to this same
  // query, at most this long.
  Result<InspectionReply> ask(const InspectionQuery& query, Repeat repeat,
                              std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  Failure last_failure() const { return failure_; }
  std::size_t connections_opened() const { return session_.connections_opened(); }
  const std::string& where() const { return where_; }  // "host:port"

 private:
  Result<InspectionReply> fail(Failure failure, std::string why);

  rendezvous::QuerySession session_;
  std::string where_;
  std::string last_query_, last_digest_;  // the last query answered, and its answer's digest
  bool answered_once_ = false;
  Failure failure_ = Failure::None;
};

}  // namespace ddplaunch
