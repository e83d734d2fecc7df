// RankTimelineReporter through a recording MasterLink: each look at the ranks turns the ones
// whose state moved on into timeline events, stamped with the link's generation; while no
// master is connected they wait and go with the next look; a look with no change sends
// nothing.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "agent/rank_timeline_reporter.h"
#include "recording_master_link.h"
#include "wire/launcher_messages.h"
#include "worker_test_access.h"

namespace ddplaunch {
namespace {

// Timeline events the node sent, over all its batches.
std::size_t events_sent(const RecordingMasterLink& master) {
  std::size_t n = 0;
  for (const auto& m : master.sent)
    if (auto batch = messages::decode_timeline_events(m)) n += batch->events.size();
  return n;
}

TEST(RankTimelineReporter, EventsWaitForAMasterAndGoWithTheNextLook) {
  FakeNode node(2, 0, Generation{1});
  RankTimelineReporter timeline;
  node.master.is_connected = false;
  timeline.report(node.view.workers(), node.master);  // both ranks appear: two events, held
  EXPECT_TRUE(node.master.sent.empty());

  node.master.is_connected = true;
  WorkerTestAccess::set_status(*node.view.ranks[1], ExitStatus{false, 3, 0, false});
  timeline.report(node.view.workers(), node.master);  // rank 1 exited: a third event
  ASSERT_EQ(node.master.count(messages::Kind::TimelineEvents), 1);
  EXPECT_EQ(node.master.sent[0].generation, Generation{1});
  EXPECT_EQ(events_sent(node.master), 3u);
}

TEST(RankTimelineReporter, ALookWithNoChangeSendsNothing) {
  FakeNode node(2, 0, Generation{1});
  RankTimelineReporter timeline;
  timeline.report(node.view.workers(), node.master);
  ASSERT_EQ(node.master.count(messages::Kind::TimelineEvents), 1);
  timeline.report(node.view.workers(), node.master);
  EXPECT_EQ(node.master.count(messages::Kind::TimelineEvents), 1);
}

}  // namespace
}  // namespace ddplaunch
