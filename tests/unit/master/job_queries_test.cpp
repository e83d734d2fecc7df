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
        investigation(io, settings(token), HistorySeed{}, policy, timeline, stack_requests_to(channel)),
        stragglers(timeline),
        queries(config(token), policy, investigation, stragglers, timeline, [this] { return attached ? &channel : nullptr; }) {
    channel.joined = {testing::node(0)};
  }
  ~MasterOfTwoNodes() { investigation.close(); }
  // Stack rounds ask the nodes through `channel`; a hang is never found here.
  static HangInvestigation::Hooks stack_requests_to(RecordingChannel& channel) {
    HangInvestigation::Hooks hooks;
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
  HangInvestigation investigation;
  StragglerReports stragglers;
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

// The typed protocol: each reply says how the job stands; a refusal is a reply kind.
InspectionReply typed(JobQueries& queries, const InspectionQuery& query) {
  const Result<InspectionReply> reply = decode_inspection_reply(queries.answer(encode_inspection_query(query)));
  EXPECT_TRUE(reply) << reply.error;
  return reply ? *reply : InspectionReply{};
}

TEST(JobQueries, ATypedQueryGetsATypedReplyThatSaysHowTheJobStands) {
  MasterOfTwoNodes master("queries-test-token");
  master.plan();
  const InspectionReply status = typed(master.queries, {InspectionAsk::StatusTable});
  EXPECT_EQ(status.kind, ReplyKind::Answer);
  EXPECT_TRUE(has(status.text, "queries-test")) << status.text;
  EXPECT_EQ(status.job.phase, "running");
  EXPECT_EQ(status.job.end, JobEnd::NotEnded);
  const InspectionReply json = typed(master.queries, {InspectionAsk::StatusJson});
  EXPECT_TRUE(has(json.text, "\"phase\":\"running\"")) << json.text;
  const InspectionReply tail = typed(master.queries, {InspectionAsk::Tail, 3, -1, ""});
  EXPECT_EQ(tail.kind, ReplyKind::Answer) << tail.text;
  const InspectionReply stacks = typed(master.queries, {InspectionAsk::Stacks, -1, -1, ""});
  EXPECT_EQ(stacks.kind, ReplyKind::Pending);  // round `next` is under way
  EXPECT_TRUE(master.channel.find("broadcast " + messages::encode(Generation{0}, messages::CollectStacks{0}).type));
}

TEST(JobQueries, ATypedRefusalIsAReplyKindNotAPrefix) {
  MasterOfTwoNodes no_token;
  no_token.plan();
  const InspectionReply tail = typed(no_token.queries, {InspectionAsk::Tail, 1, -1, ""});
  EXPECT_EQ(tail.kind, ReplyKind::Refused);
  EXPECT_TRUE(has(tail.text, "no token")) << tail.text;
  EXPECT_EQ(tail.text.rfind("error:", 0), std::string::npos) << tail.text;
  const InspectionReply unknown = typed(no_token.queries, InspectionQuery{});
  EXPECT_EQ(unknown.kind, ReplyKind::Answer);  // the status table
  const Result<InspectionReply> garbled = decode_inspection_reply(no_token.queries.answer("{\"ask\":\"reboot\"}"));
  ASSERT_TRUE(garbled) << garbled.error;
  EXPECT_EQ(garbled->kind, ReplyKind::Refused);
  EXPECT_EQ(garbled->job.phase, "running");
}

// Stands in for the debug relay: what `ddplaunch debug` asked of the console.
struct RecordingConsole : ConsoleQueries {
  std::vector<std::string> asked;
  InspectionReply transcript_after(std::size_t from) override {
    asked.push_back("after " + std::to_string(from));
    InspectionReply reply;
    reply.kind = ReplyKind::Answer;
    reply.next = 12;
    reply.prompt = "(Pdb) ";
    return reply;
  }
  InspectionReply take_line(std::string_view line) override {
    asked.push_back("line " + std::string(line));
    return refused_reply("no rank waits");
  }
};

TEST(JobQueries, DebugQueriesReachTheAttachedConsoleAndAreRefusedWithoutOne) {
  MasterOfTwoNodes master("queries-test-token");
  master.plan();
  EXPECT_EQ(typed(master.queries, {InspectionAsk::DebugPoll, -1, 0, ""}).kind, ReplyKind::Refused);
  RecordingConsole console;
  master.queries.attach_console(&console);
  const InspectionReply poll = typed(master.queries, {InspectionAsk::DebugPoll, -1, 5, ""});
  EXPECT_EQ(poll.next, 12);
  EXPECT_EQ(poll.prompt, "(Pdb) ");
  EXPECT_EQ(poll.job.phase, "running");
  const InspectionReply line = typed(master.queries, {InspectionAsk::DebugLine, -1, -1, "p x"});
  EXPECT_EQ(line.kind, ReplyKind::Refused);
  EXPECT_EQ(console.asked, (std::vector<std::string>{"after 5", "line p x"}));
  master.queries.attach_console(nullptr);
}

}  // namespace
}  // namespace ddplaunch
