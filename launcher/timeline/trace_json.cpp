// Chrome Trace Event JSON from the job's timeline: lanes' states become complete slices.
#include "timeline/trace_json.h"

#include "timeline/time_account.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

namespace ddplaunch::timeline {

namespace {
using Json = nlohmann::json;

int pid_of(const Event& e) { return e.node == kJobLane ? 0 : e.node + 1; }
int tid_of(const Event& e) { return e.node == kJobLane || e.rank == kNodeLane ? 0 : e.rank + 1; }

struct OpenSlice {
  std::string name;
  std::string detail;
  Generation generation;
  std::int64_t start_us = 0;
};

class TraceBuilder {
 public:
  explicit TraceBuilder(std::int64_t origin_us) : origin_us_(origin_us) {}

  void add(const Event& e) {
    const auto lane = std::make_pair(pid_of(e), tid_of(e));
    lanes_.insert(lane);
    if (e.type == EventType::State) {
      close(lane, e.at_us);
      if (ends_lane(e)) return instant(e, e.category.empty() ? "exit" : e.category, lane);
      open_[lane] = OpenSlice{e.name, e.detail, e.generation, e.at_us};
      return;
    }
    if (e.type == EventType::Counter) return counter(e, lane);
    instant(e, e.category.empty() ? "event" : e.category, lane);
  }

  // Slices still open (a running job, a lane whose end was not heard) end at `until_us`.
  Json finish(std::int64_t until_us) {
    for (auto& [lane, slice] : open_) slice_event(lane, slice, until_us, true);
    open_.clear();
    return std::move(events_);
  }
  const std::set<std::pair<int, int>>& lanes() const { return lanes_; }

 private:
  double ts(std::int64_t at_us) const { return static_cast<double>(at_us - origin_us_); }

  void close(const std::pair<int, int>& lane, std::int64_t at_us) {
    auto open = open_.find(lane);
    if (open == open_.end()) return;
    slice_event(lane, open->second, at_us, false);
    open_.erase(open);
  }

  void slice_event(const std::pair<int, int>& lane, const OpenSlice& slice, std::int64_t end_us, bool still_open) {
    Json args{{"generation", slice.generation.value}};
    if (lane.second > 0) args["rank"] = lane.second - 1;
    if (lane.first > 0) args["node"] = lane.first - 1;
    if (!slice.detail.empty()) args["detail"] = slice.detail;
    if (still_open) args["open"] = true;
    events_.push_back(Json{{"ph", "X"}, {"name", slice.name}, {"cat", lane.first == 0 ? "generation" : "phase"},
                           {"pid", lane.first}, {"tid", lane.second}, {"ts", ts(slice.start_us)},
                           {"dur", static_cast<double>(std::max<std::int64_t>(end_us - slice.start_us, 0))},
                           {"args", std::move(args)}});
  }

  void instant(const Event& e, const std::string& category, const std::pair<int, int>& lane) {
    Json args{{"generation", e.generation.value}};
    if (!e.detail.empty()) args["detail"] = e.detail;
    if (e.type == EventType::State) args["status"] = e.name;
    events_.push_back(Json{{"ph", "i"}, {"s", "t"}, {"name", e.name}, {"cat", category}, {"pid", lane.first},
                           {"tid", lane.second}, {"ts", ts(e.at_us)}, {"args", std::move(args)}});
    if (e.flow_out)
      events_.push_back(Json{{"ph", "s"}, {"id", e.flow_out}, {"name", "caused"}, {"cat", "cause"},
                             {"pid", lane.first}, {"tid", lane.second}, {"ts", ts(e.at_us)}});
    if (e.flow_in)
      events_.push_back(Json{{"ph", "f"}, {"bp", "e"}, {"id", e.flow_in}, {"name", "caused"}, {"cat", "cause"},
                             {"pid", lane.first}, {"tid", lane.second}, {"ts", ts(e.at_us)}});
  }

  // A counter track of the lane's node (trace viewers draw counters per process): one series
  // per rank, named after it.
  void counter(const Event& e, const std::pair<int, int>& lane) {
    const std::string series = lane.second > 0 ? "rank " + std::to_string(lane.second - 1) : "node";
    events_.push_back(Json{{"ph", "C"}, {"name", e.name}, {"cat", e.category.empty() ? "counter" : e.category},
                           {"pid", lane.first}, {"ts", ts(e.at_us)}, {"args", Json{{series, e.value}}}});
  }

  std::int64_t origin_us_;
  Json events_ = Json::array();
  std::map<std::pair<int, int>, OpenSlice> open_;
  std::set<std::pair<int, int>> lanes_;
};

Json metadata(const std::string& name, int pid, std::optional<int> tid, Json args) {
  Json m{{"ph", "M"}, {"name", name}, {"pid", pid}, {"args", std::move(args)}};
  if (tid) m["tid"] = *tid;
  return m;
}
}  // namespace

std::string trace_json(const JobTimeline& timeline, const TraceFacts& facts) {
  const std::vector<Event> events = timeline.aligned_events();
  const std::int64_t origin = events.empty() ? facts.now_us : events.front().at_us;
  TraceBuilder builder(origin);
  long generations = 0;
  for (const Event& e : events) {
    builder.add(e);
    if (e.node == kJobLane && e.type == EventType::State && !ends_lane(e)) ++generations;
  }
  const std::int64_t until = std::max(facts.now_us, events.empty() ? origin : events.back().at_us);
  Json trace_events = builder.finish(until);

  // Names first: the job, each node seen (with its host), each lane.
  Json named = Json::array();
  std::set<int> pids{0};
  for (const auto& lane : builder.lanes()) pids.insert(lane.first);
  for (int pid : pids) {
    std::string name = "job";
    if (pid > 0) {
      const auto host = timeline.node_hosts().find(pid - 1);
      name = "node " + std::to_string(pid - 1) + (host != timeline.node_hosts().end() ? " (" + host->second + ")" : "");
    }
    named.push_back(metadata("process_name", pid, std::nullopt, {{"name", name}}));
    named.push_back(metadata("process_sort_index", pid, std::nullopt, {{"sort_index", pid}}));
  }
  named.push_back(metadata("thread_name", 0, 0, {{"name", "generations"}}));
  for (const auto& [pid, tid] : builder.lanes()) {
    if (pid == 0) continue;
    const std::string name = tid == 0 ? "node " + std::to_string(pid - 1) : "rank " + std::to_string(tid - 1);
    named.push_back(metadata("thread_name", pid, tid, {{"name", name}}));
    named.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
  }
  for (auto& e : trace_events) named.push_back(std::move(e));

  Json other{{"job_id", facts.job_id},
             {"root_cause", timeline.root_cause()},
             {"exit_code", timeline.exit_code() ? Json(*timeline.exit_code()) : Json(nullptr)},
             {"generations", generations},
             {"clock", "microseconds since the first event; nodes' clocks aligned to the master's"},
             {"dropped_events", timeline.dropped()},
             {"recorded_until_us", static_cast<double>(until - origin)},
             // What the job spent its time on so far, read from these same events.
             {"time_account", Json::parse(time_account_json(account_time(events, until)))}};
  const Json trace{{"displayTimeUnit", "ms"}, {"otherData", std::move(other)}, {"traceEvents", std::move(named)}};
  return trace.dump(-1, ' ', true, Json::error_handler_t::replace);
}

std::optional<std::string> reserialized_trace(std::string_view text) {
  Json trace = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!trace.is_object()) return std::nullopt;  // also what a parse error gives: a discarded value
  return trace.dump(-1, ' ', true, Json::error_handler_t::replace);
}

}  // namespace ddplaunch::timeline
