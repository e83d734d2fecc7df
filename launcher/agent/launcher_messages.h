// The launcher's own messages on the rendezvous connection: one enum of kinds, one typed
// payload per kind, one codec (encode/decode) so both ends agree and nothing compares
// type strings anywhere else.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/preflight/ring_plan.h"
#include "ddplaunch/rendezvous/types.h"
#include "policy/failure.h"
#include "policy/rank_phase.h"
#include "policy/stack_report.h"
#include "timeline/timeline_event.h"

namespace ddplaunch::messages {

enum class Kind {
  // node → master
  WorkerFailed,  // FailureReport
  NodeFinished,  // all local workers ended (or none left to stop)
  NodeProblem,   // a local check failed, or the node was interrupted
  NodeReport,    // doctor's row
  RankStates,    // every local rank's phase (on each change, and every few seconds)
  ProbeResults,  // the node's peer probes: one line per link
  TimelineEvents,  // its ranks' state changes for the job's timeline, on the node's clock
  RankOutput,    // the lines of a followed rank (`ddplaunch tail`), batched
  // master → nodes
  Restart,       // generation = the new one
  Stop,          // stop workers, then report finished
  JobEnd,        // exit with exit_code
  Resume,        // paused ranks may continue
  ProbeVerdict,  // peer probe done: start workers, with this socket interface ("" = as before)
  Standby,       // to one launcher: it is a hot spare; wait idle for a slot
  OutputFilter,  // the terminal shows only these global ranks' lines from now on (none listed: all)
  FollowRank,    // the node of that rank sends its lines for `seconds` (renewed while someone follows)
  // Stacks on demand (either direction)
  CollectStacks,  // master → nodes: take your ranks' stacks for round `request`
  RankStacks,     // node → master: the stacks of its ranks for round `request`
  // Interactive debugging: a rank's debugger, relayed between its node and the master's console.
  DebugStopped,   // node → master: a rank stopped in its debugger
  DebugOutput,    // node → master: its debugger's output, and whether it prompts again
  DebugResumed,   // node → master: it left the debugger (continued, or exited)
  DebugInput,     // master → node: a line for that rank's debugger
  DebugAttachGdb, // master → nodes: the node of that rank attaches gdb to it
};

std::string_view kind_name(Kind kind);
std::optional<Kind> kind_of(const rendezvous::Message& message);

struct NodeFinished { int exit_code = 0; std::string summary; };
struct NodeProblem { std::string message; int exit_code = 1; };
struct NodeReport { bool ok = false; std::string nic; std::string problems; };
// log_dir: where the node writes its ranks' log files ("" without --log-dir), as an absolute path.
struct RankStates { std::string host; std::vector<RankReport> ranks; std::string log_dir; };
struct Restart { std::string reason; };
struct Stop { std::string reason; int exit_code = 1; };
struct JobEnd { int exit_code = 0; };
struct ProbeResults { std::vector<preflight::ProbedLink> links; };
struct ProbeVerdict { std::string ifname; };
// run_nonce: the run a spare waits in (etcd: it takes part in that run, as an assigned node does).
struct Standby { std::string reason; std::string run_nonce; };

rendezvous::Message encode(long generation, const FailureReport& payload);
rendezvous::Message encode(long generation, const NodeFinished& payload);
rendezvous::Message encode(long generation, const NodeProblem& payload);
rendezvous::Message encode(long generation, const NodeReport& payload);
rendezvous::Message encode(long generation, const RankStates& payload);
rendezvous::Message encode(long generation, const Restart& payload);
rendezvous::Message encode(long generation, const Stop& payload);
rendezvous::Message encode(long generation, const JobEnd& payload);
rendezvous::Message encode(long generation, const ProbeResults& payload);
rendezvous::Message encode(long generation, const ProbeVerdict& payload);
rendezvous::Message encode(long generation, const Standby& payload);
rendezvous::Message encode_resume(long generation);

struct CollectStacks { long request = 0; };
struct RankStacksReply { long request = 0; std::string host; std::vector<RankStack> stacks; };
inline constexpr std::size_t kMaxStackBytes = 16 * 1024;  // one rank's frames on the wire
inline constexpr std::size_t kMaxStacksPerMessage = 1024;
rendezvous::Message encode(long generation, const CollectStacks& payload);
rendezvous::Message encode(long generation, const RankStacksReply& payload);
std::optional<CollectStacks> decode_collect_stacks(const rendezvous::Message& message);
std::optional<RankStacksReply> decode_rank_stacks(const rendezvous::Message& message);

struct DebugStopped {
  int rank = -1, local_rank = -1, pid = 0;
  std::string host, file, function, code, reason;
  int line = 0;
};
struct DebugOutput { int rank = -1; std::string lines; bool prompt = false; };
struct DebugResumed { int rank = -1; };
struct DebugInput { int rank = -1; std::string line; };
struct DebugAttachGdb { int rank = -1; };
inline constexpr std::size_t kMaxDebugOutputBytes = 48 * 1024;  // one relayed chunk of a debugger's output
rendezvous::Message encode(long generation, const DebugStopped& payload);
rendezvous::Message encode(long generation, const DebugOutput& payload);
rendezvous::Message encode(long generation, const DebugResumed& payload);
rendezvous::Message encode(long generation, const DebugInput& payload);
rendezvous::Message encode(long generation, const DebugAttachGdb& payload);
std::optional<DebugAttachGdb> decode_debug_attach_gdb(const rendezvous::Message& message);
// Text from another launcher comes back printable (control characters made visible).
std::optional<DebugStopped> decode_debug_stopped(const rendezvous::Message& message);
std::optional<DebugOutput> decode_debug_output(const rendezvous::Message& message);
std::optional<DebugResumed> decode_debug_resumed(const rendezvous::Message& message);
std::optional<DebugInput> decode_debug_input(const rendezvous::Message& message);

// The node's timeline events since its last batch; sent_at_us: its clock when it sent them
// (the master aligns the node's clock with it). One batch holds at most
// timeline::kMaxEventsPerMessage events and kMaxTimelineBatchBytes of them encoded.
struct TimelineEvents { std::int64_t sent_at_us = 0; std::vector<timeline::Event> events; };
inline constexpr std::size_t kMaxTimelineBatchBytes = 48 * 1024;
// The events cut into batches that each fit one message.
std::vector<std::vector<timeline::Event>> timeline_batches(std::vector<timeline::Event> events);
rendezvous::Message encode(long generation, const TimelineEvents& payload);
std::optional<TimelineEvents> decode_timeline_events(const rendezvous::Message& message);

// Output you can steer: the console's `:ranks`, and `ddplaunch tail --rank R`.
struct OutputFilter { std::vector<int> ranks; };  // empty: every rank
struct FollowRank { int rank = -1; int seconds = 0; };
// lines: whole lines, each ended by '\n'; dropped: lines the node could not send meanwhile.
struct RankOutput { int rank = -1; std::string lines; long dropped = 0; };
inline constexpr std::size_t kMaxRankOutputBytes = 48 * 1024;  // one batch of a followed rank's lines
rendezvous::Message encode(long generation, const OutputFilter& payload);
rendezvous::Message encode(long generation, const FollowRank& payload);
rendezvous::Message encode(long generation, const RankOutput& payload);
std::optional<OutputFilter> decode_output_filter(const rendezvous::Message& message);
std::optional<FollowRank> decode_follow_rank(const rendezvous::Message& message);
std::optional<RankOutput> decode_rank_output(const rendezvous::Message& message);

// nullopt when the message is not of that kind or a required field is malformed.
std::optional<FailureReport> decode_failure(const rendezvous::Message& message);
std::optional<NodeFinished> decode_node_finished(const rendezvous::Message& message);
std::optional<NodeProblem> decode_node_problem(const rendezvous::Message& message);
std::optional<NodeReport> decode_node_report(const rendezvous::Message& message);
std::optional<RankStates> decode_rank_states(const rendezvous::Message& message);
std::optional<Restart> decode_restart(const rendezvous::Message& message);
std::optional<Stop> decode_stop(const rendezvous::Message& message);
std::optional<JobEnd> decode_job_end(const rendezvous::Message& message);
// At most kMaxProbeLinks links; a malformed line makes the whole message nullopt.
inline constexpr std::size_t kMaxProbeLinks = 1024;
std::optional<ProbeResults> decode_probe_results(const rendezvous::Message& message);
std::optional<ProbeVerdict> decode_probe_verdict(const rendezvous::Message& message);
std::optional<Standby> decode_standby(const rendezvous::Message& message);

}  // namespace ddplaunch::messages
