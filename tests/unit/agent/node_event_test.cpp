// The GroupSupervisor as a producer of NodeEvents: each of its callbacks publishes its own
// kind, with what the supervisor passed (group_callbacks_publishing_to).
#include <gtest/gtest.h>

#include <string>

#include <boost/asio/io_context.hpp>

#include "agent/node_event.h"
#include "recording_master_link.h"

namespace ddplaunch {
namespace {

using namespace node_event;

// Records the last event's details as well as its kind.
struct DetailedEvents : RecordingNodeEvents {
  std::string detail;
  void publish(const NodeEvent& event) override {
    RecordingNodeEvents::publish(event);
    if (const auto* e = std::get_if<DebuggerOutput>(&event)) detail = e->lines + (e->prompt ? "+prompt" : "");
    if (const auto* e = std::get_if<FollowedLine>(&event)) detail = std::to_string(e->rank) + ":" + std::string(e->line);
    if (const auto* e = std::get_if<DebuggerStopped>(&event)) detail = e->where.file + ":" + e->reason;
    if (const auto* e = std::get_if<WorkerFailed>(&event)) detail = std::to_string(e->failure.global_rank);
  }
};

TEST(NodeEvents, EachGroupCallbackPublishesItsKind) {
  boost::asio::io_context io;
  Worker worker(io, 0, 3);
  DetailedEvents events;
  const GroupCallbacks callbacks = group_callbacks_publishing_to(events);

  WorkerFailure failure;
  failure.global_rank = 3;
  callbacks.on_failure(failure);
  EXPECT_EQ(events.count<WorkerFailed>(), 1);
  EXPECT_EQ(events.detail, "3");
  callbacks.phases_changed();
  EXPECT_EQ(events.count<PhasesChanged>(), 1);
  callbacks.on_paused(worker);
  EXPECT_EQ(events.count<RankPaused>(), 1);
  callbacks.on_finished(GroupOutcome{});
  EXPECT_EQ(events.count<GroupFinished>(), 1);
  debug::StopLocation where;
  where.file = "train.py";
  callbacks.on_debugger_stopped(worker, where, "raised ValueError");
  EXPECT_EQ(events.count<DebuggerStopped>(), 1);
  EXPECT_EQ(events.detail, "train.py:raised ValueError");
  callbacks.on_debugger_output(worker, "(Pdb) ", true);
  EXPECT_EQ(events.count<DebuggerOutput>(), 1);
  EXPECT_EQ(events.detail, "(Pdb) +prompt");
  callbacks.on_debugger_left(worker);
  EXPECT_EQ(events.count<DebuggerLeft>(), 1);
  callbacks.on_rank_prompt(worker, "name? ", false);
  EXPECT_EQ(events.count<RankPromptShown>(), 1);
  callbacks.on_followed_line(3, "loss 0.1");
  EXPECT_EQ(events.count<FollowedLine>(), 1);
  EXPECT_EQ(events.detail, "3:loss 0.1");
  EXPECT_EQ(events.kinds.size(), 9u) << "one event per callback, nothing more";
}

}  // namespace
}  // namespace ddplaunch
