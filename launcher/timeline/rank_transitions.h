// RankTransitions: a node's ranks' states, seen from time to time, turned into the timeline's
// state events: one event per rank whose state changed since the last look (a new generation
// starts every rank afresh), and a rank's first training step of a generation as an instant
// ("first step", category "progress": where the job's time account starts counting it as
// training). Pure: the caller passes the states and the time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "timeline/timeline_event.h"

namespace ddplaunch::timeline {

struct RankState {
  int rank = 0;       // global rank
  std::string state;  // setup, init, running, paused, debugging, exited:N, killed:SIG
  bool stepped = false;  // it reported a training step in this generation
};

inline constexpr const char* kFirstStepName = "first step";
inline constexpr const char* kProgressCategory = "progress";

class RankTransitions {
 public:
  std::vector<Event> observe(Generation generation, const std::vector<RankState>& ranks, std::int64_t now_us);

 private:
  std::optional<Generation> generation_;  // none before the first look
  std::map<int, std::string> last_state_;  // by global rank, in generation_
  std::map<int, bool> stepped_;            // by global rank: its first step was told, in generation_
};

}  // namespace ddplaunch::timeline
