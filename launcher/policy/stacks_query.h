// Whether `ddplaunch stacks` may take a new stack round. Each round interrupts every rank of
// the job (faulthandler, eu-stack, gdb): unbounded requests were a denial of service (2000
// requests in 1.6 s gave 2000 files and halved non-Python ranks' throughput), and on a
// multi-node job without a token anyone reaching the port could ask.
#pragma once

#include <optional>
#include <string>

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
  std::string refusal;  // Refuse: what to tell the asker
};

inline constexpr double kMinStacksIntervalS = 5;  // between two rounds started on request
inline constexpr int kStacksFilesKept = 8;        // --log-dir/stacks-<round>.txt

// Start a round; or join the one in flight, or the latest when it began under
// kMinStacksIntervalS ago (the asker gets those stacks, no rank is interrupted again); or
// refuse on a multi-node job without a token.
StacksQueryAnswer decide_stacks_query(const StacksQueryFacts& facts);

}  // namespace ddplaunch
