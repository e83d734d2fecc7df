// JobTimeline: the master's record of the job's timeline. The master records its own events
// (generations, failures judged, restarts and stops ordered, nodes lost, coordinator moves,
// hang rounds) on its clock, and gathers every node's rank events, which come on the node's
// clock: each batch says when the node sent it, and the smallest (received − sent) seen from
// that node is its offset (the node's clock plus that offset is the master's, to within the
// fastest delivery's one-way time). Bounded: the first quarter of `max_events` stays (how the
// job started), then the latest events in a window of the rest; older ones in between are
// dropped and counted. Pure: the caller passes every time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "timeline/timeline_event.h"

namespace ddplaunch::timeline {

class JobTimeline {
 public:
  static constexpr std::size_t kDefaultMaxEvents = 50000;
  explicit JobTimeline(std::size_t max_events = kDefaultMaxEvents);

  // An event the master saw, on its own clock.
  void record(Event event);
  // A node's events, on its clock, as one batch it sent at `sent_at_us` (its clock) and the
  // master received at `received_at_us` (the master's). The connection names the node.
  void record_from_node(int node, std::int64_t sent_at_us, std::int64_t received_at_us, std::vector<Event> events);
  void name_node(int node, std::string host);

  // A rank's failure as the master judged it: the first one since the last restart or stop
  // starts the link to the order it causes.
  void record_failure(int node, int rank, Generation generation, std::int64_t at_us, std::string detail);
  // An order on the job's lane (a restart, a stop): it ends the link of the failure that caused it.
  void record_order(std::string name, std::string category, Generation generation, std::int64_t at_us,
                    std::string detail);
  // The job's end, in `generation` (the one it ended in): its exit status.
  void record_end(int exit_code, Generation generation, std::int64_t at_us);
  void set_root_cause(std::string text) { root_cause_ = std::move(text); }

  // Every event kept, on the master's clock, in time order (events of one time in the order
  // recorded). A failure the master judged after the rank ended sits at the rank's end (just
  // inside its last slice): its link starts where the rank failed, not when the report came.
  std::vector<Event> aligned_events() const;
  const std::map<int, std::string>& node_hosts() const { return node_hosts_; }
  const std::string& root_cause() const { return root_cause_; }
  std::optional<int> exit_code() const { return exit_code_; }
  std::size_t dropped() const { return dropped_; }
  std::size_t size() const { return head_.size() + tail_.size(); }

 private:
  struct Kept {
    Event event;
    bool on_node_clock = false;
    std::uint64_t order = 0;  // recording order: ties at one time keep it
  };
  void keep(Event event, bool on_node_clock);

  std::size_t head_limit_, tail_limit_;
  std::vector<Kept> head_;
  std::deque<Kept> tail_;
  std::size_t dropped_ = 0;
  std::uint64_t recorded_ = 0;
  std::map<int, std::int64_t> node_offset_us_;  // master clock − node clock
  std::map<int, std::string> node_hosts_;
  long next_flow_ = 1;
  long open_flow_ = 0;  // the failure link waiting for its order (0: none)
  std::string root_cause_;
  std::optional<int> exit_code_;
};

}  // namespace ddplaunch::timeline
