// Doubles for a node part's seams (agent/master_link.h, node_view.h, node_event.h,
// rank_debug_sessions.h), for the node's unit tests: no rendezvous client, no supervisor.
// RecordingMasterLink records what a part sends its master (dropped while not connected, as
// the node does); FakeNodeView holds the workers and the step the test sets;
// RecordingNodeEvents records which events a part published; RecordingKeyboard the lines
// typed into a rank; FakeNode holds them all with the loop the part runs on.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "agent/master_link.h"
#include "agent/node_event.h"
#include "agent/node_view.h"
#include "agent/rank_debug_sessions.h"
#include "wire/launcher_messages.h"

namespace ddplaunch {

class RecordingMasterLink : public MasterLink {
 public:
  bool is_connected = true;
  Generation current{0};
  std::vector<rendezvous::Message> sent;

  bool connected() const override { return is_connected; }
  Generation generation() const override { return current; }
  void send(const rendezvous::Message& message) override {
    if (is_connected) sent.push_back(message);
  }

  int count(messages::Kind kind) const {
    return static_cast<int>(
        std::count_if(sent.begin(), sent.end(), [kind](const auto& m) { return messages::kind_of(m) == kind; }));
  }
};

class FakeNodeView : public NodeView {
 public:
  std::vector<std::shared_ptr<Worker>> ranks;
  bool active = true;
  int rank_of_node = 0;
  NodeState step = NodeState::Running;

  // `count` workers of global ranks first, first + 1, ... (local ranks 0, 1, ...).
  void add_workers(boost::asio::io_context& io, int count, int first) {
    for (int local = 0; local < count; ++local) ranks.push_back(std::make_shared<Worker>(io, local, first + local));
  }

  const std::vector<std::shared_ptr<Worker>>& workers() const override { return ranks; }
  bool workers_active() const override { return active; }
  int node_rank() const override { return rank_of_node; }
  NodeState state() const override { return step; }
};

// Index of alternative E in NodeEvent.
template <typename E, typename Variant = NodeEvent>
struct node_event_index;
template <typename E, typename... Kinds>
struct node_event_index<E, std::variant<Kinds...>> {
  static constexpr std::size_t value = [] {
    constexpr bool same[] = {std::is_same_v<E, Kinds>...};
    for (std::size_t i = 0; i < sizeof...(Kinds); ++i)
      if (same[i]) return i;
    return sizeof...(Kinds);
  }();
};

class RecordingNodeEvents : public NodeEvents {
 public:
  std::vector<std::size_t> kinds;               // each published event's alternative, in order
  std::vector<std::set<int>> followed;          // FollowedRanksChanged's sets
  std::vector<std::pair<int, bool>> gdb_holds;  // GdbHoldChanged: (global rank, attached)

  void publish(const NodeEvent& event) override {
    kinds.push_back(event.index());
    if (const auto* f = std::get_if<node_event::FollowedRanksChanged>(&event)) followed.push_back(f->ranks);
    if (const auto* g = std::get_if<node_event::GdbHoldChanged>(&event))
      gdb_holds.emplace_back(g->worker.global_rank, g->attached);
  }

  template <typename E>
  int count() const {
    return static_cast<int>(std::count(kinds.begin(), kinds.end(), node_event_index<E>::value));
  }
};

class RecordingKeyboard : public RankKeyboard {
 public:
  std::vector<std::pair<int, std::string>> lines;
  bool delivers = true;

  bool type_line(int rank, const std::string& line) override {
    lines.emplace_back(rank, line);
    return delivers;
  }
};

// A node without sockets: its loop, its workers and step, and what its parts tell it.
struct FakeNode {
  boost::asio::io_context io;
  FakeNodeView view;
  RecordingMasterLink master;
  RecordingNodeEvents events;
  RecordingKeyboard keyboard;

  // `workers` workers from global rank `first_rank`; messages stamped with `generation`.
  FakeNode(int workers, int first_rank, Generation generation) {
    view.add_workers(io, workers, first_rank);
    master.current = generation;
  }
  RankDebugSeams debug_seams() { return RankDebugSeams{master, view, keyboard, events}; }

  void run_for(std::chrono::milliseconds time) {
    io.restart();
    io.run_for(time);
  }
  // Runs the loop until `done` or 5 s (a part's thread answers through it).
  void run_until(const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done() && std::chrono::steady_clock::now() < until) run_for(std::chrono::milliseconds(10));
  }
};

}  // namespace ddplaunch
