// How `ddplaunch debug` asks the job's master: each query a short connection of its own that
// proves the token (rendezvous/client.h). A connection that drops or goes unanswered is common
// while the job runs (a master busy with many clients closes new ones at once), so a query is
// asked again a few times over a few seconds before the master is taken for gone; a master
// that said no (a refused token, not this job's master) is told apart from one that is gone.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ddplaunch {

struct RemoteConsoleTarget;

struct MasterAnswer {
  enum class Kind {
    Answered,  // text: the master's answer
    Refused,   // the master said no, or is not the job's master: text says why (printable)
    Gone,      // no answer after every try: the job has ended (or its master is unreachable)
    Unsure,    // a line's query went unanswered: it may or may not have been carried out
  };
  Kind kind = Kind::Answered;
  std::string text;
};

class ConsoleMasterLink {
 public:
  // What a query may be asked again after: a poll after anything (it changes nothing), a typed
  // line only when the master cannot have carried it out (it never answered: asked again, a
  // `next` would step twice).
  enum class Repeat { AfterAnyDrop, OnlyWhereNotCarriedOut };

  explicit ConsoleMasterLink(const RemoteConsoleTarget& target);
  MasterAnswer ask(const std::string& query, Repeat repeat) const;
  const std::string& where() const { return where_; }  // "host:port"

 private:
  std::string host_;
  std::uint16_t port_ = 0;
  std::string job_id_;
  std::string token_;
  std::string where_;
};

}  // namespace ddplaunch
