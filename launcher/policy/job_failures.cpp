// JobFailures: see job_failures.h. The worker port and the rendezvous port are recognised
// in c10d's own words, in the failure's detail or its last output lines.
#include "policy/job_failures.h"

#include <algorithm>

#include <fmt/format.h>

#include "policy/root_cause.h"

namespace ddplaunch {

namespace {
bool mentions_port_in_use(const WorkerFailure& f) {
  auto has = [](const std::string& s) {
    return s.find("EADDRINUSE") != std::string::npos || s.find("ddress already in use") != std::string::npos;
  };
  return has(f.detail) || std::any_of(f.tail.begin(), f.tail.end(), has);
}

// c10d's own words when a rank cannot host its store: "failed to bind to [::]:PORT (errno:
// 98 - Address already in use)".
bool failed_to_bind_port(const WorkerFailure& f, int port) {
  if (port <= 0) return false;
  const std::string needle = fmt::format(":{} (errno: 98", port);
  auto has = [&needle](const std::string& s) {
    return s.find("failed to bind") != std::string::npos && s.find(needle) != std::string::npos;
  };
  return has(f.detail) || std::any_of(f.tail.begin(), f.tail.end(), has);
}

// What happened, then the one explanation and fix both ways of seeing the mistake share.
std::string store_on_rendezvous_port_note(const std::string& what, int port) {
  return fmt::format(
      "{}: the program's init_method (tcp://HOST:{}) or TCPStore names the launcher's port, which speaks another "
      "protocol, so the store calls fail (a crash such as std::bad_alloc may follow). Use init_method='env://' (or "
      "none), or tcp://$MASTER_ADDR:$MASTER_PORT: rank 0 hosts the store there. With the Python shim (--shim auto) "
      "this is rewritten for you",
      what, port);
}
}  // namespace

bool JobFailures::record(int node, const FailureReport& report) {
  ++count_;
  last_error_by_node_[node] = describe_failure_line(report);
  if (mentions_port_in_use(report.failure)) port_at_fault_ = true;
  // Rank 0 hosting its store on the launcher's own port fails at once, often before another
  // rank's store client is seen connecting there: the same mistake, named the same way.
  if (failed_to_bind_port(report.failure, rendezvous_port_) && foreign_store_note_.empty())
    foreign_store_note_ = store_on_rendezvous_port_note(
        fmt::format("rank {} could not host its c10d TCPStore on port {}, ddplaunch's rendezvous port (every other "
                    "rank's c10d TCPStore client would connect to the launcher there)",
                    report.failure.global_rank, rendezvous_port_),
        rendezvous_port_);
  if (first_) return false;
  first_ = report;
  return true;
}

void JobFailures::record_as_root_cause(const FailureReport& report) {
  ++count_;
  first_ = report;
}

std::string JobFailures::last_error(int node) const {
  auto it = last_error_by_node_.find(node);
  return it == last_error_by_node_.end() ? std::string() : it->second;
}

std::optional<std::string> JobFailures::note_foreign_store_client(const std::string& peer, int port) {
  const bool first = foreign_store_note_.empty();
  foreign_store_note_ = store_on_rendezvous_port_note(
      fmt::format("a worker's c10d TCPStore client ({}) connected to ddplaunch's rendezvous port {}", peer, port), port);
  if (!first) return std::nullopt;
  return foreign_store_note_;
}

bool JobFailures::take_port_at_fault() {
  const bool was = port_at_fault_;
  port_at_fault_ = false;
  return was;
}

std::string JobFailures::root_cause(Generation generation, const std::string& budget_text) const {
  if (!first_) return "";
  return describe_root_cause(*first_, count_ - 1, generation, budget_text) +
         (foreign_store_note_.empty() ? "" : "  note: " + foreign_store_note_ + "\n");
}

}  // namespace ddplaunch
