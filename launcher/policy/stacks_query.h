// Whether `ddplaunch stacks` may take a new stack round. Each round interrupts every rank of
// the job (faulthandler, eu-stack, gdb): unbounded requests were a denial of service (2000
// requests in 1.6 s gave 2000 files and halved non-Python ranks' throughput), and on a
// multi-node job without a token anyone reaching the port could ask. And the query's wire
// form, both ends' one codec: the asker sends a StacksRequest, the master a StacksReply.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "policy/init_tracker.h"  // PolicyClock

namespace ddplaunch {

struct StacksQueryFacts {
  PolicyClock::time_point now;
  bool multi_node = false;
  bool has_token = false;
  std::optional<long> in_flight;          // an on-request round not finished yet
  std::optional<long> last_round;         // the latest on-request round, finished or not
  PolicyClock::time_point last_started{};  // when last_round began
};

struct StacksQueryAnswer {
  enum class Kind { Start, Join, Refuse } kind = Kind::Start;
  long round = 0;       // Join: the round whose stacks answer this request
  std::string refusal;  // Refuse: what to tell the asker (a StacksReply's error)
};

inline constexpr double kMinStacksIntervalS = 5;  // between two rounds started on request
inline constexpr int kStacksFilesKept = 8;        // --log-dir/stacks-<round>.txt

// Start a round; or join the one in flight, or the latest when it began under
// kMinStacksIntervalS ago (the asker gets those stacks, no rank is interrupted again); or
// refuse on a multi-node job without a token.
StacksQueryAnswer decide_stacks_query(const StacksQueryFacts& facts);

// The query (rendezvous::query_master's text): "stacks" starts (or joins) a round, then
// "stacks <round>" asks for that round's stacks until they are done.
struct StacksRequest {
  std::optional<long> round;  // none: start or join a round
};
std::string encode_stacks_request(const StacksRequest& request);
// nullopt: not a stacks query, or its round is not a whole number >= 0.
std::optional<StacksRequest> decode_stacks_request(std::string_view query);

// The master's answer: "pending <round>", "done\n<stacks>" or "error: <why>".
struct StacksReply {
  enum class Kind { Pending, Done, Error } kind = Kind::Error;
  long round = 0;    // Pending: the round to ask for next
  std::string text;  // Done: the grouped stacks, as the master wrote them; Error: why, one printable line
};
inline constexpr std::size_t kMaxStacksErrorChars = 2000;  // of an error a master sends back
std::string encode_stacks_reply(const StacksReply& reply);
// Any answer decodes: a malformed round, or an answer of none of the three forms (a hostile
// or newer master), is an Error saying so; an error's text is escaped (rendezvous/printable.h)
// and cut at kMaxStacksErrorChars, so that a master can neither drive the terminal nor forge a log line.
StacksReply decode_stacks_reply(std::string_view answer);

}  // namespace ddplaunch
