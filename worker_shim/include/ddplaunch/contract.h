// The environment contract between ddplaunch and every worker it starts, and the
// status-channel message format the shim uses to report init progress.
// Header-only and dependency-free: the launcher and the worker shim both include it,
// so the names and the wire format cannot drift apart.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddplaunch::contract {

// torchrun-compatible variables (same names and meanings as torch.distributed.run).
inline constexpr const char* kMasterAddr = "MASTER_ADDR";
inline constexpr const char* kMasterPort = "MASTER_PORT";
inline constexpr const char* kRank = "RANK";
inline constexpr const char* kLocalRank = "LOCAL_RANK";
inline constexpr const char* kWorldSize = "WORLD_SIZE";
inline constexpr const char* kLocalWorldSize = "LOCAL_WORLD_SIZE";
inline constexpr const char* kGroupRank = "GROUP_RANK";
inline constexpr const char* kGroupWorldSize = "GROUP_WORLD_SIZE";  // node count
inline constexpr const char* kRoleRank = "ROLE_RANK";
inline constexpr const char* kRoleWorldSize = "ROLE_WORLD_SIZE";
inline constexpr const char* kRoleName = "ROLE_NAME";
inline constexpr const char* kRestartCount = "TORCHELASTIC_RESTART_COUNT";
inline constexpr const char* kMaxRestarts = "TORCHELASTIC_MAX_RESTARTS";
inline constexpr const char* kRunId = "TORCHELASTIC_RUN_ID";
inline constexpr const char* kUseAgentStore = "TORCHELASTIC_USE_AGENT_STORE";
inline constexpr const char* kOmpNumThreads = "OMP_NUM_THREADS";
inline constexpr const char* kErrorFile = "TORCHELASTIC_ERROR_FILE";  // per rank and generation
inline constexpr const char* kPythonExec = "PYTHON_EXEC";
inline constexpr const char* kPythonUnbuffered = "PYTHONUNBUFFERED";
// torch >= 2.2 reads the first; older torch the second (deprecated since 2.2).
inline constexpr const char* kTorchNcclAsyncErrorHandling = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
inline constexpr const char* kNcclAsyncErrorHandling = "NCCL_ASYNC_ERROR_HANDLING";
inline constexpr const char* kNcclSocketIfname = "NCCL_SOCKET_IFNAME";
inline constexpr const char* kGlooSocketIfname = "GLOO_SOCKET_IFNAME";

// ddplaunch's own variables.
inline constexpr const char* kTimeoutSeconds = "DDPLAUNCH_TIMEOUT_S";      // group init deadline; information only
inline constexpr const char* kGeneration = "DDPLAUNCH_GENERATION";         // restart round, 0-based
// A generation's number (DDPLAUNCH_GENERATION, a status report's): the width of the launcher's
// Generation (rendezvous/generation.h), which its status channel checks at compile time.
using GenerationNumber = std::uint64_t;
inline constexpr const char* kNodeRank = "DDPLAUNCH_NODE_RANK";
inline constexpr const char* kNodeCount = "DDPLAUNCH_NODE_COUNT";
inline constexpr const char* kStatusSocket = "DDPLAUNCH_STATUS_SOCKET";    // AF_UNIX datagram path
inline constexpr const char* kJobId = "DDPLAUNCH_JOB_ID";
inline constexpr const char* kJobTag = "DDPLAUNCH_JOB_TAG";  // random per launcher: finds escaped descendants
// --debug: the timeout the Python shim gives a process group whose program gave none.
inline constexpr const char* kDebugTimeoutSeconds = "DDPLAUNCH_DEBUG_TIMEOUT_S";
// --post-mortem: an uncaught exception stops a Python rank in pdb for at most this many seconds.
inline constexpr const char* kPostMortemSeconds = "DDPLAUNCH_POST_MORTEM_S";
// The line the Python shim prints just before that pdb: "<mark>ValueError".
inline constexpr const char* kPostMortemMark = "ddplaunch post-mortem: raised ";
// "1": ddplaunch's own stdin was at end of file (/dev/null, closed). The worker's stdin is
// still a pipe (its debugger's keyboard); the Python shim moves that pipe to a descriptor of
// pdb's own and gives the program /dev/null on fd 0: input() gets end of file at once, as
// under torchrun, while breakpoint() still waits for `ddplaunch debug`.
inline constexpr const char* kStdinAtEof = "DDPLAUNCH_STDIN_AT_EOF";
// The launchers' rendezvous port (node 0's). torchrun's `--master-port P` names the store
// port, so scripts write init_method="tcp://HOST:P"; the Python shim points such an
// init_method at MASTER_ADDR:MASTER_PORT, where rank 0 hosts the store under ddplaunch.
inline constexpr const char* kRendezvousPort = "DDPLAUNCH_RENDEZVOUS_PORT";

// Stacks on demand: the Python shim registers faulthandler for signal
// DDPLAUNCH_STACK_SIGNAL, writing every thread's Python frames to
// "$DDPLAUNCH_STACK_DIR/stack-<pid>.txt" (created when the handler is registered, so the
// launcher sends the signal only to a process whose file exists: the signal's default
// action would end any other). Never SIGUSR1/SIGUSR2: those are forwarded to the workers.
inline constexpr const char* kStackDir = "DDPLAUNCH_STACK_DIR";
inline constexpr const char* kStackSignal = "DDPLAUNCH_STACK_SIGNAL";
inline constexpr int kStackSignalAboveRtMin = 5;  // SIGRTMIN + 5 (39 with glibc)
inline std::string stack_file_name(long pid) { return "stack-" + std::to_string(pid) + ".txt"; }

// Status channel: one AF_UNIX SOCK_DGRAM datagram per event, a single text line:
//   "DDPL1 <event> <rank> <generation> <pid> <detail...>"
// detail is free text (may be empty) with newlines folded to " | ".
// Datagrams above kMaxStatusBytes are truncated by the sender.
inline constexpr std::size_t kMaxStatusBytes = 4096;
inline constexpr std::string_view kStatusMagic = "DDPL1";

// Progress: "step" carries "<steps> <max_interval_ms> [<span_ms> <wait_ms>]" — training
// steps so far in this generation, the longest interval between two steps since the previous
// step report (sent at most about once a second), and where the shim measures it, the wall
// time since that report and the part of it spent waiting inside collectives (the straggler
// watch reads compute = span - wait); "section_begin <name>" / "section_end <name>"
// mark a long planned pause (a checkpoint, an evaluation) that has deadlines of its own.
enum class StatusEvent { InitBegin, InitOk, InitFailed, Heartbeat, Step, SectionBegin, SectionEnd };

inline std::string_view to_string(StatusEvent e) {
  switch (e) {
    case StatusEvent::InitBegin: return "init_begin";
    case StatusEvent::InitOk: return "init_ok";
    case StatusEvent::InitFailed: return "init_failed";
    case StatusEvent::Heartbeat: return "heartbeat";
    case StatusEvent::Step: return "step";
    case StatusEvent::SectionBegin: return "section_begin";
    case StatusEvent::SectionEnd: return "section_end";
  }
  return "unknown";
}

inline std::optional<StatusEvent> parse_status_event(std::string_view s) {
  if (s == "init_begin") return StatusEvent::InitBegin;
  if (s == "init_ok") return StatusEvent::InitOk;
  if (s == "init_failed") return StatusEvent::InitFailed;
  if (s == "heartbeat") return StatusEvent::Heartbeat;
  if (s == "step") return StatusEvent::Step;
  if (s == "section_begin") return StatusEvent::SectionBegin;
  if (s == "section_end") return StatusEvent::SectionEnd;
  return std::nullopt;
}

struct StatusMessage {
  StatusEvent event = StatusEvent::Heartbeat;
  int rank = -1;            // global rank
  GenerationNumber generation = 0;
  long pid = 0;
  std::string detail;       // e.g. the NCCL error string for init_failed
};

inline std::string format_status(const StatusMessage& m) {
  std::string detail;
  detail.reserve(m.detail.size());
  for (char c : m.detail) {
    if (c == '\n') detail += " | ";
    else if (c != '\r') detail += c;
  }
  std::string out = std::string(kStatusMagic) + " " + std::string(to_string(m.event)) + " " +
                    std::to_string(m.rank) + " " + std::to_string(m.generation) + " " +
                    std::to_string(m.pid) + " " + detail;
  if (out.size() > kMaxStatusBytes) out.resize(kMaxStatusBytes);
  return out;
}

namespace detail {
// Splits the next space-delimited token off `rest`.
inline std::string_view next_token(std::string_view& rest) {
  auto space = rest.find(' ');
  std::string_view token = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
  return token;
}
template <typename Int>
inline bool parse_int(std::string_view s, Int& out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && ptr == s.data() + s.size() && !s.empty();
}
}  // namespace detail

// Returns nullopt for anything that is not a well-formed status line: the channel is a
// local socket any process can write to, so garbage must be ignored, not trusted.
inline std::optional<StatusMessage> parse_status(std::string_view line) {
  StatusMessage m;
  std::string_view rest = line;
  if (detail::next_token(rest) != kStatusMagic) return std::nullopt;
  auto event = parse_status_event(detail::next_token(rest));
  if (!event) return std::nullopt;
  m.event = *event;
  if (!detail::parse_int(detail::next_token(rest), m.rank) || m.rank < 0) return std::nullopt;
  if (!detail::parse_int(detail::next_token(rest), m.generation)) return std::nullopt;  // unsigned: no sign
  if (!detail::parse_int(detail::next_token(rest), m.pid) || m.pid <= 0) return std::nullopt;
  m.detail = std::string(rest);
  return m;
}

// The detail of a "step" report: steps so far, longest interval since the last report.
struct StepProgress {
  long steps = 0;
  long max_interval_ms = 0;
  long span_ms = -1;  // -1: not measured (an older shim, or one that cannot see the collectives)
  long wait_ms = -1;
};

inline std::string format_step_detail(const StepProgress& p) {
  std::string detail = std::to_string(p.steps) + " " + std::to_string(p.max_interval_ms);
  if (p.span_ms >= 0 && p.wait_ms >= 0) detail += " " + std::to_string(p.span_ms) + " " + std::to_string(p.wait_ms);
  return detail;
}

inline std::optional<StepProgress> parse_step_detail(std::string_view detail) {
  StepProgress p;
  std::string_view rest = detail;
  if (!detail::parse_int(detail::next_token(rest), p.steps) || p.steps < 0) return std::nullopt;
  if (!detail::parse_int(detail::next_token(rest), p.max_interval_ms) || p.max_interval_ms < 0) return std::nullopt;
  long span = -1;
  long wait = -1;
  // The measured time is optional; a pair that does not make sense is left out, the count kept.
  if (detail::parse_int(detail::next_token(rest), span) && detail::parse_int(detail::next_token(rest), wait) &&
      span >= 0 && wait >= 0 && wait <= span) {
    p.span_ms = span;
    p.wait_ms = wait;
  }
  return p;
}

}  // namespace ddplaunch::contract
