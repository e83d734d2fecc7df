// The master's timeline: its own events and the policy's orders with their causes, as the
// trace JSON shows them, and the files written at the job's end. The policy is a real one,
// planned on two nodes; no sockets, no loop.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "master/master_timeline.h"
#include "timeline_files.h"
#include "policy_stories.h"

namespace ddplaunch {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct PlannedTimeline {
  PlannedTimeline() : policy(testing::settings()), timeline(policy, config()) {
    policy.on_nodes_joined(Generation{0}, testing::nodes(2), PolicyClock::now());
    timeline.begin_generation(Generation{0}, testing::nodes(2), 4, 30);
  }
  static LaunchConfig config() {
    LaunchConfig c;
    c.job_id = "timeline-test";
    return c;
  }
  JobPolicy policy;
  MasterTimeline timeline;
};

TEST(MasterTimeline, AGenerationShowsItsNodesAndWorldSize) {
  PlannedTimeline t;
  const std::string json = t.timeline.json();
  EXPECT_TRUE(has(json, "timeline-test")) << json;
  EXPECT_TRUE(has(json, "generation 0")) << json;
  EXPECT_TRUE(has(json, "2 node(s), world size 4")) << json;
}

TEST(MasterTimeline, ARestartIsAnOrderWithItsCauseAndTheJobsRootCause) {
  PlannedTimeline t;
  FailureReport failure;
  failure.host = "host1";
  failure.failure.global_rank = 3;
  failure.failure.phase = FailurePhase::Init;
  failure.failure.kind = FailureKind::InitFailed;
  failure.failure.detail = "ncclCommInitRank failed";
  t.timeline.record_failure(1, Generation{0}, failure);
  decision::OrderRestart restart;
  restart.generation = Generation{1};
  restart.reason = "rank 3 failed in init";
  t.timeline.record_decisions({decision::ScheduleRestart{1, 0.5}, restart});
  const std::string json = t.timeline.json();
  EXPECT_TRUE(has(json, "rank 3 (node 1, host1)")) << json;
  EXPECT_TRUE(has(json, "node 1 (host1)")) << json << "the node's lane is named by its host";
  EXPECT_TRUE(has(json, "ncclCommInitRank failed")) << json;
  EXPECT_TRUE(has(json, R"("name":"restart \u2192 generation 1")")) << json;
  // The root cause carries the failure's own error, as the terminal shows it.
  EXPECT_TRUE(has(json, "\"root_cause\":\"rank 3 failed in init: ncclCommInitRank failed\"")) << json;
}

TEST(MasterTimeline, RefusalsAndInstantsAreOnTheJobsLane) {
  PlannedTimeline t;
  t.timeline.record_instant(timeline::kJobLane, "coordinator moved", "coordinator", "took the job over");
  t.timeline.record_decisions({decision::RefuseJob{"version mismatch on node 1"}});
  const std::string json = t.timeline.json();
  EXPECT_TRUE(has(json, "coordinator moved")) << json;
  EXPECT_TRUE(has(json, "refused")) << json;
  EXPECT_TRUE(has(json, "\"root_cause\":\"version mismatch on node 1\"")) << json;
}

TEST(MasterTimeline, TheFilesGoWhereTraceNamesThem) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "master-timeline-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  JobPolicy policy(testing::settings());
  LaunchConfig c = PlannedTimeline::config();
  c.trace_file = (dir / "job.json").string();
  MasterTimeline timeline(policy, c);
  timeline.record_decisions({decision::EndJob{0}});
  timeline.write_files();
  const TimelinePaths paths = timeline_paths_for(c.trace_file);
  EXPECT_TRUE(std::filesystem::exists(paths.json)) << paths.json;
  EXPECT_TRUE(std::filesystem::exists(paths.page)) << paths.page;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ddplaunch
