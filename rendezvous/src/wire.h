// Protocol vocabulary: frame kinds and how facts, assignments and lists become frame fields.
// Internal to rendezvous; the public types live in types.h.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/codec.h"
#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch::rendezvous::detail {

// Frame kinds. Server → client: hello, welcome, assign, refuse, abort, progress, status_reply.
// Client → server: join, status, rejoin. Both ways: hb, hb_ack, msg. Their typed form, decoded
// once from a frame and dispatched through a table per side: frame_routes.h.
inline constexpr const char* kHello = "hello";
inline constexpr const char* kWelcome = "welcome";  // the master's proof; job facts only after it
inline constexpr const char* kJoin = "join";
inline constexpr const char* kStatus = "status";
inline constexpr const char* kStatusReply = "status_reply";
inline constexpr const char* kAssign = "assign";
inline constexpr const char* kRefuse = "refuse";
inline constexpr const char* kAbort = "abort";
inline constexpr const char* kProgress = "progress";
inline constexpr const char* kRejoin = "rejoin";
inline constexpr const char* kHeartbeat = "hb";
inline constexpr const char* kHeartbeatAck = "hb_ack";
inline constexpr const char* kMsg = "msg";

using Fields = std::map<std::string, std::string>;

std::string join_list(const std::vector<std::string>& items);  // '\n'-separated
std::vector<std::string> split_list(const std::string& text);
std::string format_double(double v);
bool parse_int(const std::string& text, long long min, long long max, long long& out);
bool parse_double(const std::string& text, double& out);
std::string format_seconds(std::chrono::milliseconds d);  // "2.5 s"
std::string host_port_text(const std::string& host, int port);  // "h:p", "[v6]:p"
const std::string* find_field(const Fields& f, const std::string& key);
// An ack of our heartbeat `seq`, sent at `sent`: its round trip is smoothed into `rtt_ms`
// (an ack of an older heartbeat, or without a seq, changes nothing). Both sides measure so.
void note_heartbeat_ack(const Fields& ack, std::uint64_t seq, Clock::time_point sent, double& rtt_ms);

// Whether a heartbeat tick may judge a peer silent. A tick that comes more than an interval
// late found this process's own loop held up (a stall, a burst of work such as starting a
// thousand workers): the peer's frames that arrived meanwhile are still unread, so that tick
// judges nobody. Only every other tick can be skipped, so a dead peer is still found.
class SilenceJudge {
 public:
  bool may_judge(Clock::time_point now, Clock::duration interval) {
    const bool late = due_ != Clock::time_point{} && now - due_ > interval;
    const bool judge = !late || skipped_;
    skipped_ = !judge;
    due_ = now + interval;
    return judge;
  }

 private:
  Clock::time_point due_{};
  bool skipped_ = false;
};

// A frame of this kind with nothing else, no job id either: what the master sends a peer
// that has proved nothing yet (its greeting, a refusal).
inline Frame bare_frame(const char* kind) {
  Frame f;
  f.kind = kind;
  return f;
}

// The exact bytes a join or status request claims: its body without the proof field. Both
// sides compute it from the frame, so any change on the way changes the digest in the proofs.
std::string claims_of(const Frame& request);

void put_facts(Fields& f, const std::string& prefix, const NodeFacts& facts);
bool get_facts(const Fields& f, const std::string& prefix, NodeFacts& out, std::string& error);

// Node list as pre-encoded `key=value` lines, shared by every assignment frame.
std::string encode_node_list(const std::vector<NodeRecord>& nodes);
void put_assignment(Frame& frame, const Assignment& a);  // everything but `nodes`
bool get_assignment(const Frame& frame, Assignment& out, std::string& error);

}  // namespace ddplaunch::rendezvous::detail
