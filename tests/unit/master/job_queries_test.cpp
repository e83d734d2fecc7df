// The master's answers to status connections: each query reaches the part that answers it,
// and the refusals are the same as ever. A real JobPolicy (joining, or planned on two nodes),
// the hang watch and timeline it reads, and a RecordingChannel for what is asked of the nodes.
#include <gtest/gtest.h>

#include <string>

#include <boost/asio/io_context.hpp>

#include "master/job_queries.h"
#include "policy_stories.h"
#include "recording_channel.h"
#include "two_node_settings.h"

namespace ddplaunch {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct MasterOfTwoNodes {
  explicit MasterOfTwoNodes(std::string token = "") : policy(testing::settings()), timeline(policy, config(token)),
        hang_watch(io, settings(token), HistorySeed{}, policy, timeline, stack_requests_to(channel)),
        queries(config(token), policy, hang_watch, timeline, [this] { return attached ? &channel : nullptr; }) {
    channel.joined = {testing::node(0)};
  }
  ~MasterOfTwoNodes() { hang_watch.close(); }
  // Stack rounds ask the nodes through `channel`; a hang is never found here.
  static MasterHangWatch::Hooks stack_requests_to(RecordingChannel& channel) {
    MasterHangWatch::Hooks hooks;
    hooks.ask_nodes = [&channel](long round) { channel.broadcast(messages::encode(Generation{0}, messages::CollectStacks{round})); };
    return hooks;
  }
  static CoordinatorSettings settings(const std::string& token) {
    CoordinatorSettings s = two_node_settings("queries-test");
    s.config.token = token;
    return s;
  }
  static LaunchConfig config(const std::string& token) { return settings(token).config; }
  void plan() {
    policy.on_nodes_joined(Generation{0}, testing::nodes(2), PolicyClock::now());
    timeline.begin_generation(Generation{0}, testing::nodes(2), 4, 30);
  }

  boost::asio::io_context io;
  RecordingChannel channel;
  bool attached = true;
  JobPolicy policy;
  MasterTimeline timeline;
  MasterHangWatch hang_watch;
  JobQueries queries;
};

TEST(JobQueries, WhileJoiningStatusListsTheNodesHereSoFar) {
  MasterOfTwoNodes master;
  EXPECT_TRUE(has(master.queries.status_text(), "host0")) << master.queries.status_text();
  master.plan();
  const std::string planned = master.queries.status_text();
  EXPECT_TRUE(has(planned, "queries-test")) << planned;
  EXPECT_TRUE(has(planned, "hang deadlines: ")) << planned;
}

TEST(JobQueries, StatusAndTimelineJsonNameTheJob) {
  MasterOfTwoNodes master;
  master.plan();
  EXPECT_TRUE(has(master.queries.answer("status json"), "queries-test"));
  const std::string timeline = master.queries.answer("timeline json");
  EXPECT_TRUE(has(timeline, "\"job_id\":\"queries-test\"")) << timeline;
  EXPECT_TRUE(has(timeline, "generation 0")) << "the master's timeline, not a copy: " << timeline;
}

TEST(JobQueries, AnUnknownQueryIsAnError) {
  MasterOfTwoNodes master;
  EXPECT_EQ(master.queries.answer("bogus"), "error: unknown query 'bogus'");
}

TEST(JobQueries, TailIsRefusedWithoutATokenAndBeforeAnyWorkerRuns) {
  MasterOfTwoNodes no_token;
  no_token.plan();
  const auto refused = decode_tail_reply(no_token.queries.answer(encode_tail_request({1, -1})));
  ASSERT_TRUE(refused);
  EXPECT_TRUE(has(refused->error, "no token")) << refused->error;

  MasterOfTwoNodes joining("queries-test-token");
  const auto early = decode_tail_reply(joining.queries.answer(encode_tail_request({1, -1})));
  ASSERT_TRUE(early);
  EXPECT_TRUE(has(early->error, "still joining")) << early->error;
}

TEST(JobQueries, TailAsksTheNodesToFollowTheRank) {
  MasterOfTwoNodes master("queries-test-token");
  master.plan();
  const auto reply = decode_tail_reply(master.queries.answer(encode_tail_request({3, -1})));
  ASSERT_TRUE(reply);
  EXPECT_TRUE(reply->error.empty()) << reply->error;
  const auto* follow = master.channel.find("broadcast " + messages::encode(Generation{0}, messages::FollowRank{3, 1}).type);
  ASSERT_TRUE(follow) << ::testing::PrintToString(master.channel.whats());
}

TEST(JobQueries, StacksGoToTheHangWatch) {
  MasterOfTwoNodes master("queries-test-token");
  const StacksReply not_running = decode_stacks_reply(master.queries.answer("stacks"));
  EXPECT_TRUE(has(not_running.text, "no workers to take stacks from")) << not_running.text;
  master.plan();
  const StacksReply pending = decode_stacks_reply(master.queries.answer("stacks"));
  EXPECT_EQ(pending.kind, StacksReply::Kind::Pending);
  EXPECT_TRUE(master.channel.find("broadcast " + messages::encode(Generation{0}, messages::CollectStacks{0}).type));
}

}  // namespace
}  // namespace ddplaunch
