// Chrome Trace Event JSON of a small job: two nodes, a failure, a restart, the job's end.
#include "timeline/trace_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "timeline/timeline_page.h"

namespace ddplaunch::timeline {
namespace {

using Json = nlohmann::json;

Event state(std::int64_t at, Generation generation, int rank, const char* name) {
  Event e;
  e.at_us = at;
  e.generation = generation;
  e.rank = rank;
  e.type = EventType::State;
  e.name = name;
  return e;
}

Event generation_begins(std::int64_t at, Generation generation) {
  Event e = state(at, generation, kNodeLane, "");
  e.name = "generation " + to_string(generation);
  return e;
}

// Node 0 runs rank 0, node 1 rank 1; rank 1 fails in generation 0, the job restarts, and
// generation 1 is still running when the trace is taken (its slices are open).
JobTimeline restarted_job() {
  JobTimeline t;
  t.name_node(0, "host-a");
  t.name_node(1, "host-b");
  t.record(generation_begins(1000, Generation{0}));
  t.record_from_node(0, 0, 0, {state(1100, Generation{0}, 0, "setup"), state(2000, Generation{0}, 0, "init"), state(3000, Generation{0}, 0, "running")});
  t.record_from_node(1, 0, 0, {state(1200, Generation{0}, 1, "setup"), state(2100, Generation{0}, 1, "init"), state(3100, Generation{0}, 1, "running"),
                               state(5000, Generation{0}, 1, "exited:1")});
  t.record_failure(1, 1, Generation{0}, 5050, "rank 1 exited 1");
  t.record_order("restart → generation 1", "restart", Generation{1}, 6000, "rank 1 exited 1 </script>");
  t.record_from_node(0, 0, 0, {state(6100, Generation{0}, 0, "killed:SIGTERM")});
  t.record(generation_begins(7000, Generation{1}));
  t.record_from_node(0, 0, 0, {state(7100, Generation{1}, 0, "setup")});
  return t;
}

std::vector<Json> of_phase(const Json& trace, const std::string& ph) {
  std::vector<Json> found;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == ph) found.push_back(e);
  return found;
}

TEST(TraceJson, StatesBecomeSlicesExitsAndOrdersInstantsAndTheFailureLinksToItsRestart) {
  const Json trace = Json::parse(trace_json(restarted_job(), {"job-x", 9000}));
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  EXPECT_EQ(trace["otherData"]["job_id"], "job-x");
  EXPECT_EQ(trace["otherData"]["generations"], 2);
  EXPECT_TRUE(trace["otherData"]["exit_code"].is_null());  // still running
  EXPECT_EQ(trace["otherData"]["recorded_until_us"], 8000.0);  // since the first event (1000)
  // What the job spent so far, read from the same events: the whole recorded wall time.
  EXPECT_DOUBLE_EQ(trace["otherData"]["time_account"]["wall_s"].get<double>(), 0.008) << trace["otherData"];

  const auto slices = of_phase(trace, "X");
  auto slice = [&](int pid, int tid, const std::string& name) -> Json {
    for (const auto& s : slices)
      if (s["pid"] == pid && s["tid"] == tid && s["name"] == name) return s;
    return nullptr;
  };
  // Rank 1 on node 1: pid 2, tid 2; init from 2100 to 3100 → ts 1100, dur 1000.
  const Json init = slice(2, 2, "init");
  ASSERT_FALSE(init.is_null());
  EXPECT_EQ(init["ts"], 1100.0);
  EXPECT_EQ(init["dur"], 1000.0);
  EXPECT_EQ(init["args"]["generation"], 0);
  EXPECT_EQ(init["args"]["rank"], 1);
  EXPECT_EQ(init["args"]["node"], 1);
  EXPECT_EQ(slice(2, 2, "running")["dur"], 1900.0);  // until its exit at 5000
  // The job's lane: generation 0 until generation 1 began; generation 1 still open.
  EXPECT_EQ(slice(0, 0, "generation 0")["dur"], 6000.0);
  const Json open_generation = slice(0, 0, "generation 1");
  ASSERT_FALSE(open_generation.is_null());
  EXPECT_EQ(open_generation["dur"], 2000.0);
  EXPECT_EQ(open_generation["args"]["open"], true);
  EXPECT_FALSE(slice(1, 1, "setup").is_null());  // rank 0's generation 1 setup, open

  const auto instants = of_phase(trace, "i");
  auto instant = [&](const std::string& name) -> Json {
    for (const auto& i : instants)
      if (i["name"] == name) return i;
    return nullptr;
  };
  EXPECT_EQ(instant("exited:1")["cat"], "exit");
  EXPECT_EQ(instant("exited:1")["pid"], 2);
  EXPECT_EQ(instant("killed:SIGTERM")["args"]["status"], "killed:SIGTERM");
  EXPECT_EQ(instant("failure")["cat"], "failure");
  EXPECT_EQ(instant("restart → generation 1")["cat"], "restart");
  EXPECT_EQ(instant("restart → generation 1")["pid"], 0);

  const auto starts = of_phase(trace, "s");
  const auto ends = of_phase(trace, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(starts[0]["id"], ends[0]["id"]);
  EXPECT_EQ(starts[0]["pid"], 2);  // from rank 1's lane
  EXPECT_EQ(ends[0]["pid"], 0);    // to the job's lane
  EXPECT_EQ(ends[0]["bp"], "e");
}

TEST(TraceJson, MetadataNamesTheJobEachNodeWithItsHostAndEachRank) {
  const Json trace = Json::parse(trace_json(restarted_job(), {"job-x", 9000}));
  std::map<std::pair<int, int>, std::string> threads;
  std::map<int, std::string> processes;
  for (const auto& e : of_phase(trace, "M")) {
    if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  EXPECT_EQ(processes[0], "job");
  EXPECT_EQ(processes[1], "node 0 (host-a)");
  EXPECT_EQ(processes[2], "node 1 (host-b)");
  EXPECT_EQ((threads[{0, 0}]), "generations");
  EXPECT_EQ((threads[{1, 1}]), "rank 0");
  EXPECT_EQ((threads[{2, 2}]), "rank 1");
}

TEST(TraceJson, AnEndedJobSaysItsExitStatusAndRootCause) {
  JobTimeline t = restarted_job();
  t.set_root_cause("rank 1 (node 1, host-b) exited 1");
  t.record_end(1, Generation{0}, 8000);
  const Json trace = Json::parse(trace_json(t, {"job-x", 9000}));
  EXPECT_EQ(trace["otherData"]["exit_code"], 1);
  EXPECT_EQ(trace["otherData"]["root_cause"], "rank 1 (node 1, host-b) exited 1");
  bool ended = false;
  for (const auto& e : of_phase(trace, "X"))
    if (e["name"] == "generation 1") {
      EXPECT_EQ(e["dur"], 1000.0);  // closed by the job's end
      EXPECT_FALSE(e["args"].contains("open"));
      ended = true;
    }
  EXPECT_TRUE(ended);
}

TEST(TraceJson, ACountersValuesBecomeACounterTrackOfItsNodeOneSeriesPerRank) {
  JobTimeline t;
  t.name_node(1, "host-b");
  for (int i = 0; i < 2; ++i) {
    Event e;
    e.at_us = 1000 + i * 2000;
    e.node = 1;
    e.rank = 3;
    e.type = EventType::Counter;
    e.name = "compute share";
    e.category = "straggler";
    e.value = i == 0 ? 0.4 : 0.9;
    t.record(e);
  }
  const Json trace = Json::parse(trace_json(t, {"job", 5000}));
  std::vector<Json> counters;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "C") counters.push_back(e);
  }
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0]["name"], "compute share");
  EXPECT_EQ(counters[0]["pid"], 2);  // node 1's process
  EXPECT_DOUBLE_EQ(counters[1]["args"]["rank 3"].get<double>(), 0.9);
}

TEST(TraceJson, AnEmptyTimelineIsStillAValidTrace) {
  const Json trace = Json::parse(trace_json(JobTimeline{}, {"empty", 5}));
  EXPECT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["otherData"]["generations"], 0);
}

TEST(TimelinePage, TheTraceGoesIntoThePageAndCannotEndItsScript) {
  const std::string json = trace_json(restarted_job(), {"job-x", 9000});
  const std::string page = timeline_page(json);
  EXPECT_EQ(page.find("/*DDPLAUNCH_TRACE_JSON*/null"), std::string::npos);
  EXPECT_NE(page.find("\"job_id\":\"job-x\""), std::string::npos);
  EXPECT_NE(json.find("1 </script>"), std::string::npos);        // the detail as recorded
  EXPECT_NE(page.find("1 \\u003c/script>"), std::string::npos);  // escaped inside the page
  EXPECT_EQ(page.find("1 </script>"), std::string::npos);
  EXPECT_NE(page.rfind("</html>"), std::string::npos);
}

// What another process hands over as a trace is JSON, parsed and written again, or nothing.
TEST(TimelinePage, OnlyAJsonObjectIsTakenAsATraceAndLineSeparatorsAreEscaped) {
  for (const char* not_a_trace : {"null; document.title = 'owned'", "null", "[1]", "{\"a\": 1} <script>", "",
                                  "{\"bad\": \"\xff\"}"})
    EXPECT_EQ(reserialized_trace(not_a_trace), std::nullopt) << not_a_trace;
  const auto trace = reserialized_trace("{ \"x\" : \"</script><!-- \xE2\x80\xA8 \xE2\x80\xA9\" }");
  ASSERT_TRUE(trace);
  EXPECT_EQ(*trace, R"({"x":"</script><!-- \u2028 \u2029"})");
  // The page's own escaping holds for raw separators too.
  const std::string page = timeline_page("{\"x\":\"a\xE2\x80\xA8" "b\xE2\x80\xA9" "c</script>\"}");
  EXPECT_NE(page.find(R"({"x":"a\u2028b\u2029c\u003c/script>"})"), std::string::npos);
  EXPECT_EQ(page.find("\xE2\x80\xA8"), std::string::npos);
}

}  // namespace
}  // namespace ddplaunch::timeline
