// The `ddplaunch stacks` query's codec (policy/stacks_query.h): requests and answers round
// trip in their wire form, and whatever a hostile master answers decodes to an error that
// says so, escaped and bounded, never to a round the asker would then ask for.
#include <gtest/gtest.h>

#include <string>

#include "policy/stacks_query.h"

using namespace ddplaunch;

namespace {
using Kind = StacksReply::Kind;
}  // namespace

TEST(StacksQueryCodec, RequestsRoundTripInTheirWireForm) {
  EXPECT_EQ(encode_stacks_request({}), "stacks");
  EXPECT_EQ(encode_stacks_request({12}), "stacks 12");
  auto start = decode_stacks_request("stacks");
  ASSERT_TRUE(start);
  EXPECT_FALSE(start->round);
  auto round = decode_stacks_request(encode_stacks_request({12}));
  ASSERT_TRUE(round && round->round);
  EXPECT_EQ(*round->round, 12);
  EXPECT_EQ(decode_stacks_request("stacks 0")->round, 0);
}

TEST(StacksQueryCodec, AnythingElseIsNotAStacksRequest) {
  for (const char* query : {"", "stack", "stacks ", "stacks  3", "stacks -3", "stacks +3", "stacks 3x", "stacks 3 ",
                            "stacks\n3", "stacksx", "stacks 99999999999999999999999", "status", "Stacks"})
    EXPECT_FALSE(decode_stacks_request(query)) << '"' << query << '"';
}

TEST(StacksQueryCodec, RepliesRoundTripInTheirWireForm) {
  EXPECT_EQ(encode_stacks_reply({Kind::Pending, 7, {}}), "pending 7");
  EXPECT_EQ(encode_stacks_reply({Kind::Done, 7, "stacks of 2 rank(s)\n  rank 0: at x.py:3\n"}),
            "done\nstacks of 2 rank(s)\n  rank 0: at x.py:3\n");
  EXPECT_EQ(encode_stacks_reply({Kind::Error, 0, "no stack round 3"}), "error: no stack round 3");

  StacksReply pending = decode_stacks_reply("pending 7");
  EXPECT_EQ(pending.kind, Kind::Pending);
  EXPECT_EQ(pending.round, 7);
  StacksReply done = decode_stacks_reply("done\nstacks of 2 rank(s)\n  rank 0: at x.py:3\n");
  EXPECT_EQ(done.kind, Kind::Done);
  EXPECT_EQ(done.text, "stacks of 2 rank(s)\n  rank 0: at x.py:3\n");  // the lines as the master grouped them
  StacksReply empty = decode_stacks_reply("done\n");
  EXPECT_EQ(empty.kind, Kind::Done);
  EXPECT_EQ(empty.text, "");
  StacksReply error = decode_stacks_reply(encode_stacks_reply({Kind::Error, 0, "the job is joining"}));
  EXPECT_EQ(error.kind, Kind::Error);
  EXPECT_EQ(error.text, "the job is joining");
}

// What the master says to one of its own refusals reaches the asker whole.
TEST(StacksQueryCodec, TheTokenlessRefusalReachesTheAskerAsAnError) {
  StacksQueryFacts facts;
  facts.multi_node = true;
  const StacksQueryAnswer refused = decide_stacks_query(facts);
  ASSERT_EQ(refused.kind, StacksQueryAnswer::Kind::Refuse);
  const StacksReply reply = decode_stacks_reply(encode_stacks_reply({Kind::Error, 0, refused.refusal}));
  EXPECT_EQ(reply.kind, Kind::Error);
  EXPECT_EQ(reply.text, refused.refusal);
  EXPECT_NE(reply.text.find("has no rendezvous token"), std::string::npos) << reply.text;
}

// A hostile (or newer) master: no round the asker would send back, no terminal control, no
// forged log line, no unbounded error text.
TEST(StacksQueryCodec, MalformedAnswersFromAHostileMasterAreErrorsSayingSo) {
  for (const char* answer : {"pending ", "pending x", "pending -1", "pending 1x", "pending 1\nstacks 2",
                             "pending 99999999999999999999999", "pending  1", "pending +1"}) {
    const StacksReply reply = decode_stacks_reply(answer);
    EXPECT_EQ(reply.kind, Kind::Error) << '"' << answer << '"';
    EXPECT_NE(reply.text.find("malformed answer"), std::string::npos) << reply.text;
    EXPECT_EQ(reply.text.find('\n'), std::string::npos) << reply.text;
  }
  for (const char* answer : {"", "pending", "done", "DONE\nx", "ok", " pending 1", "pending\t1", "error:x"}) {
    const StacksReply reply = decode_stacks_reply(answer);
    EXPECT_EQ(reply.kind, Kind::Error) << '"' << answer << '"';
    EXPECT_NE(reply.text.find("unexpected answer"), std::string::npos) << reply.text;
  }
  const StacksReply escaped = decode_stacks_reply("error: \x1b[2J\rINFO forged line\nnext");
  EXPECT_EQ(escaped.kind, Kind::Error);
  EXPECT_EQ(escaped.text, "\\x1b[2J\\rINFO forged line\\nnext");
  const StacksReply huge = decode_stacks_reply("error: " + std::string(1 << 20, 'e'));
  EXPECT_EQ(huge.kind, Kind::Error);
  EXPECT_LE(huge.text.size(), kMaxStacksErrorChars + 8);
  EXPECT_NE(huge.text.find("[...]"), std::string::npos);
}

// On-request stack rounds are rate limited and refused without a token on a
// multi-node job.
TEST(StacksQuery, OneRoundInFlightOnePerIntervalAndNoneWithoutATokenOnManyNodes) {
  using Kind = StacksQueryAnswer::Kind;
  const auto t0 = PolicyClock::time_point{} + std::chrono::hours(1);
  StacksQueryFacts f;
  f.now = t0;
  f.has_token = true;
  f.multi_node = true;
  EXPECT_EQ(decide_stacks_query(f).kind, Kind::Start);  // the first request
  f.in_flight = 4;
  f.last_round = 4;
  f.last_started = t0;
  f.now = t0 + std::chrono::seconds(30);
  auto join = decide_stacks_query(f);  // a round still running (however old) is joined
  EXPECT_EQ(join.kind, Kind::Join);
  EXPECT_EQ(join.round, 4);
  f.in_flight.reset();
  f.now = t0 + std::chrono::seconds(2);
  join = decide_stacks_query(f);  // finished, but 2 s ago: its stacks answer
  EXPECT_EQ(join.kind, Kind::Join);
  EXPECT_EQ(join.round, 4);
  f.now = t0 + std::chrono::seconds(6);
  EXPECT_EQ(decide_stacks_query(f).kind, Kind::Start);  // past the interval: a new round
  f.has_token = false;
  auto refused = decide_stacks_query(f);
  EXPECT_EQ(refused.kind, Kind::Refuse);
  EXPECT_NE(refused.refusal.find("DDPLAUNCH_TOKEN"), std::string::npos) << refused.refusal;
  f.multi_node = false;  // one node: the port is this machine's business
  EXPECT_EQ(decide_stacks_query(f).kind, Kind::Start);
}
