// JobTimeline: bounded storage, the nodes' clock offsets, and the failure → order links.
#include "timeline/job_timeline.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace ddplaunch::timeline {

JobTimeline::JobTimeline(std::size_t max_events)
    : head_limit_(std::max<std::size_t>(max_events / 4, 1)),
      tail_limit_(std::max<std::size_t>(max_events - max_events / 4, 1)) {}

void JobTimeline::keep(Event event, bool on_node_clock) {
  Kept kept{std::move(event), on_node_clock, recorded_++};
  if (head_.size() < head_limit_) return head_.push_back(std::move(kept));
  if (tail_.size() == tail_limit_) {
    tail_.pop_front();
    ++dropped_;
  }
  tail_.push_back(std::move(kept));
}

void JobTimeline::record(Event event) { keep(std::move(event), false); }

void JobTimeline::record_from_node(int node, std::int64_t sent_at_us, std::int64_t received_at_us,
                                   std::vector<Event> events) {
  const std::int64_t offset = received_at_us - sent_at_us;
  auto [known, first] = node_offset_us_.try_emplace(node, offset);
  if (!first) known->second = std::min(known->second, offset);
  for (Event& e : events) {
    e.node = node;
    e.flow_in = e.flow_out = 0;  // links are the master's to make
    keep(std::move(e), true);
  }
}

void JobTimeline::name_node(int node, std::string host) { node_hosts_[node] = std::move(host); }

void JobTimeline::record_failure(int node, int rank, Generation generation, std::int64_t at_us, std::string detail) {
  Event e;
  e.at_us = at_us;
  e.generation = generation;
  e.node = node;
  e.rank = rank;
  e.name = "failure";
  e.category = "failure";
  e.detail = std::move(detail);
  if (open_flow_ == 0) e.flow_out = open_flow_ = next_flow_++;
  record(std::move(e));
}

void JobTimeline::record_order(std::string name, std::string category, Generation generation, std::int64_t at_us,
                               std::string detail) {
  Event e;
  e.at_us = at_us;
  e.generation = generation;
  e.name = std::move(name);
  e.category = std::move(category);
  e.detail = std::move(detail);
  e.flow_in = std::exchange(open_flow_, 0);
  record(std::move(e));
}

void JobTimeline::record_end(int exit_code, Generation generation, std::int64_t at_us) {
  exit_code_ = exit_code;
  Event e;
  e.at_us = at_us;
  e.generation = generation;
  e.type = EventType::State;
  e.name = "ended";
  e.category = "job";
  e.detail = "exit status " + std::to_string(exit_code);
  record(std::move(e));
}

std::vector<Event> JobTimeline::aligned_events() const {
  std::vector<const Kept*> kept;
  kept.reserve(size());
  for (const Kept& k : head_) kept.push_back(&k);
  for (const Kept& k : tail_) kept.push_back(&k);
  std::vector<std::pair<std::int64_t, const Kept*>> timed;
  timed.reserve(kept.size());
  for (const Kept* k : kept) {
    std::int64_t at = k->event.at_us;
    if (k->on_node_clock)
      if (auto offset = node_offset_us_.find(k->event.node); offset != node_offset_us_.end()) at += offset->second;
    timed.emplace_back(at, k);
  }
  // Where each rank's lane ended, per generation: a failure judged later moves there.
  std::map<std::tuple<int, int, std::uint64_t>, std::int64_t> lane_ends;
  for (const auto& [at, k] : timed)
    if (ends_lane(k->event) && k->event.rank != kNodeLane)
      lane_ends[{k->event.node, k->event.rank, k->event.generation.value}] = at;
  for (auto& [at, k] : timed) {
    const Event& e = k->event;
    if (e.category != "failure" || e.rank == kNodeLane) continue;
    if (auto end = lane_ends.find({e.node, e.rank, e.generation.value}); end != lane_ends.end() && end->second <= at)
      at = std::max<std::int64_t>(end->second - 1, 0);
  }
  std::stable_sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->order < b.second->order;
  });
  std::vector<Event> events;
  events.reserve(timed.size());
  for (const auto& [at, k] : timed) {
    events.push_back(k->event);
    events.back().at_us = at;
  }
  return events;
}

}  // namespace ddplaunch::timeline
