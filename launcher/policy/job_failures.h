// JobFailures: what the job's failures leave behind for the people who read its end — the
// first failure of the current generation (the root cause), how many there were in all, each
// node's last error (for `ddplaunch status`), whether a failure blamed the worker port, and
// the note that the program pointed its c10d store at the launcher's rendezvous port. Pure.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ddplaunch/rendezvous/generation.h"
#include "policy/failure.h"

namespace ddplaunch {

template <class T>
struct StateFields;

class JobFailures {
 public:
  // A worker's failure reported by (or for) `node`. True when it is the first of this generation.
  bool record(int node, const FailureReport& report);
  // A failure that is the root cause whatever the ranks report next (a person quit a debugger).
  void record_as_root_cause(const FailureReport& report);
  // A new generation: its first failure is still to come.
  void new_generation() { first_.reset(); }
  const std::optional<FailureReport>& first() const { return first_; }

  void set_last_error(int node, std::string text) { last_error_by_node_[node] = std::move(text); }
  std::string last_error(int node) const;  // "" when none

  // The rendezvous port, known once it is bound: a rank that cannot host its store there was
  // pointed at it by the program.
  void set_rendezvous_port(int port) { rendezvous_port_ = port; }
  // A program's c10d TCPStore client connected to the rendezvous port `port` from `peer`; the
  // note to say when it is the first one.
  std::optional<std::string> note_foreign_store_client(const std::string& peer, int port);
  // Whether a failure since the last call said the worker port was in use (then a new one is
  // picked); the answer is given once.
  bool take_port_at_fault();

  // The job's root cause for its end, with the store note: "" without a failure.
  std::string root_cause(Generation generation, const std::string& budget_text) const;

 private:
  friend struct StateFields<JobFailures>;  // the state document saves every field

  std::optional<FailureReport> first_;  // of the current generation
  int count_ = 0;                       // all generations
  std::map<int, std::string> last_error_by_node_;
  bool port_at_fault_ = false;
  std::string foreign_store_note_;  // a worker's TCPStore client reached the rendezvous port
  int rendezvous_port_ = 0;
};

}  // namespace ddplaunch
