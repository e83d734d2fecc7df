// What the job spent its time on, read from its timeline (so the end summary, `status` and the
// report file say what the timeline shows): the time to start (the first event → every rank's
// first training step), the time each restart lost (the failure → every rank training again),
// the time ranks were held in a debugger or paused, the time from a suspected hang to what
// ended it, and the share of the wall time in which every rank was training — the effective
// training time (ETT%) in the sense Meta publishes for its clusters.
//
// "Training" for a rank in a generation starts at its first step ("first step" instants, when
// the program shows steps); a generation in which no rank ever stepped (a program with no
// optimizer, DDP or collective the shim sees) counts from every rank's "running" state
// instead. Pure: the events and the time come in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "timeline/timeline_event.h"

namespace ddplaunch::timeline {

struct RestartCost {
  Generation failed_in;            // the generation that failed
  std::int64_t failed_at_us = 0;   // its first failure (else the hang round, else the order)
  std::int64_t lost_us = 0;        // → every rank training in the next generation (or the end)
  bool recovered = false;          // false: the job ended before every rank trained again
};

struct TimeAccount {
  std::int64_t wall_us = 0;                 // the first event → the end (or now)
  std::optional<std::int64_t> to_start_us;  // none: never every rank training in the first generation
  std::vector<RestartCost> restarts;
  std::int64_t debugger_us = 0;             // some rank in a debugger or paused
  std::int64_t hang_us = 0;                 // a stack round (hang suspected) → the next generation or the end
  std::int64_t training_us = 0;             // every rank training, none held, no hang suspected
  bool progress_seen = false;               // some rank showed steps (else "running" counted)

  double effective_share() const {
    return wall_us > 0 ? static_cast<double>(training_us) / static_cast<double>(wall_us) : 0.0;
  }
};

// `events`: JobTimeline::aligned_events() (time order, master clock); `end_us`: the job's end,
// or now for a running job.
TimeAccount account_time(const std::vector<Event>& events, std::int64_t end_us);

// One line for a person: "ETT 87.2 %: 3m02s training of 3m29s; start 14.1s; 1 restart lost
// 9.8s; debugger 0s; hangs 0s".
std::string time_account_line(const TimeAccount& account);
// The same for a script: one JSON object, seconds as numbers, null where not measured.
std::string time_account_json(const TimeAccount& account);

}  // namespace ddplaunch::timeline
