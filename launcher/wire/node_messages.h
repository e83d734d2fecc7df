// What a node tells the master about itself (a worker failed, the node finished or hit a
// problem, its doctor row, its ranks' states) and the master's orders to the nodes (restart,
// stop, end, resume, stand by): records, each declared once on the wire.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/types.h"
#include "policy/failure.h"
#include "policy/node_signals.h"
#include "policy/rank_phase.h"
#include "wire/message_declaration.h"

namespace ddplaunch::messages {

struct NodeFinished { int exit_code = 0; std::string summary; };
struct NodeProblem { std::string message; int exit_code = 1; };
struct NodeReport { bool ok = false; std::string nic; std::string problems; };
// log_dir: where the node writes its ranks' log files ("" without --log-dir), as an absolute path.
// signals: what the node measured of itself over its last window (agent/node_signal_sampler.h).
struct RankStates {
  std::string host;
  std::vector<RankReport> ranks;
  std::string log_dir;
  NodeSignals signals;
};
struct Restart { std::string reason; };
struct Stop { std::string reason; int exit_code = 1; };
struct JobEnd { int exit_code = 0; };
struct Resume {};  // paused ranks may continue (no payload)
// run_nonce: the run a spare waits in (etcd: it takes part in that run, as an assigned node does).
struct Standby { std::string reason; std::string run_nonce; };

// A worker's failure as one JSON text, written by its one codec (the policy state's too,
// policy/failure_codec.h), its output tail bounded (message_bounds.h). Read: refused unless a
// whole report; its texts made printable, a tail line with line breaks split into its lines,
// the tail bounded again as ours.
struct FailureReportText {
  std::string write(const FailureReport& report) const;
  bool read(const std::string* sent, FailureReport& report) const;
};

// One line per rank: "rank pid phase init_entries state steps max_interval_ms progress_age_ms
// section [span_ms wait_ms [cpu_millicores]]" (progress, for hang detection; a section name is
// one word, "-" for none; then what the shim measured, -1 -1 when only the CPU share follows).
// A line without progress (an older launcher) reads as none yet; a malformed line, a negative
// rank, count or unknown phase refuses the message; the section is made printable; a
// measurement that makes no sense is left out.
struct RankLines {
  std::string write(const std::vector<RankReport>& ranks) const;
  bool read(const std::string* sent, std::vector<RankReport>& ranks) const;
};

// The node's signals, one "name value" line each, only those measured ("throttled SHARE
// CGROUP": the cgroup's name, printable and cut to kMaxCgroupBytes, to the end of the line).
// Read: a share outside [0, 1], a malformed line or an unknown name is left out; never refuses
// the message (a newer launcher may send names this one does not know).
struct NodeSignalLines {
  static constexpr std::size_t kMaxCgroupBytes = 256;
  std::string write(const NodeSignals& signals) const;
  bool read(const std::string* sent, NodeSignals& signals) const;
};

template <>
struct WireFields<FailureReport> {
  static constexpr Kind kind = Kind::WorkerFailed;
  template <class Io, class Self>
  static void list(Io& io, Self& r) {
    io("report", r, FailureReportText{});
  }
};

template <>
struct WireFields<NodeFinished> {
  static constexpr Kind kind = Kind::NodeFinished;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("exit_code", p.exit_code, Int{.fallback = 1});
    io("summary", p.summary, Lines{});
  }
};

template <>
struct WireFields<NodeProblem> {
  static constexpr Kind kind = Kind::NodeProblem;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("message", p.message, Entry{.fallback = "unspecified problem"});
    io("exit_code", p.exit_code, Int{.fallback = 1});
  }
};

template <>
struct WireFields<NodeReport> {
  static constexpr Kind kind = Kind::NodeReport;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("ok", p.ok, Flag{});
    io("nic", p.nic, Text{.fallback = "-", .empty_as_fallback = true});
    io("problems", p.problems, Lines{});
  }
};

template <>
struct WireFields<RankStates> {
  static constexpr Kind kind = Kind::RankStates;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("host", p.host, Text{.fallback = "?"});
    io("ranks", p.ranks, RankLines{});
    io("log_dir", p.log_dir, Text{});
    io("signals", p.signals, NodeSignalLines{});
  }
};

template <>
struct WireFields<Restart> {
  static constexpr Kind kind = Kind::Restart;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("reason", p.reason, Entry{});
  }
};

template <>
struct WireFields<Stop> {
  static constexpr Kind kind = Kind::Stop;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("reason", p.reason, Entry{});
    io("exit_code", p.exit_code, Int{.fallback = 1});
  }
};

template <>
struct WireFields<JobEnd> {
  static constexpr Kind kind = Kind::JobEnd;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("exit_code", p.exit_code, Int{.fallback = 1});
  }
};

template <>
struct WireFields<Resume> {
  static constexpr Kind kind = Kind::Resume;
  template <class Io, class Self>
  static void list(Io&, Self&) {}
};

template <>
struct WireFields<Standby> {
  static constexpr Kind kind = Kind::Standby;
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("reason", p.reason, Entry{});
    io("run", p.run_nonce, RunNonce{});
  }
};

// The names the rest of the tree calls: decode<Payload> under its older name.
inline constexpr auto& decode_failure = decode<FailureReport>;
inline constexpr auto& decode_node_finished = decode<NodeFinished>;
inline constexpr auto& decode_node_problem = decode<NodeProblem>;
inline constexpr auto& decode_node_report = decode<NodeReport>;
inline constexpr auto& decode_rank_states = decode<RankStates>;
inline constexpr auto& decode_restart = decode<Restart>;
inline constexpr auto& decode_stop = decode<Stop>;
inline constexpr auto& decode_job_end = decode<JobEnd>;
inline constexpr auto& decode_standby = decode<Standby>;
inline rendezvous::Message encode_resume(Generation generation) { return encode(generation, Resume{}); }

}  // namespace ddplaunch::messages
