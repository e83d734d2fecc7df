// The inspection protocol's records: each survives its encoding, a reply always carries how
// the job stands, what is not a reply of this version decodes to an error saying so, and the
// end of a job is a typed value read from its exit status.
#include <gtest/gtest.h>

#include "wire/inspection_messages.h"

namespace ddplaunch {
namespace {

TEST(InspectionMessages, AQueryRoundTrips) {
  const InspectionQuery tail{InspectionAsk::Tail, 3, 120, ""};
  const std::string text = encode_inspection_query(tail);
  EXPECT_TRUE(is_inspection_query(text));
  const Result<InspectionQuery> back = decode_inspection_query(text);
  ASSERT_TRUE(back) << back.error;
  EXPECT_EQ(back->ask, InspectionAsk::Tail);
  EXPECT_EQ(back->rank, 3);
  EXPECT_EQ(back->from, 120);
  const Result<InspectionQuery> line =
      decode_inspection_query(encode_inspection_query({InspectionAsk::DebugLine, -1, -1, "p x\n\"y\""}));
  ASSERT_TRUE(line) << line.error;
  EXPECT_EQ(line->line, "p x\n\"y\"");
}

TEST(InspectionMessages, AReplyRoundTripsWithTheJobsStanding) {
  InspectionReply reply;
  reply.kind = ReplyKind::Answer;
  reply.text = "rank 0 line\n";
  reply.job = {"ended", JobEnd::Failed, 3, "rank 1 exited with status 3"};
  reply.next = 42;
  reply.missed = 2;
  reply.prompt = "(Pdb) ";
  const Result<InspectionReply> back = decode_inspection_reply(encode_inspection_reply(reply));
  ASSERT_TRUE(back) << back.error;
  EXPECT_EQ(back->kind, ReplyKind::Answer);
  EXPECT_EQ(back->text, reply.text);
  EXPECT_EQ(back->job.phase, "ended");
  EXPECT_EQ(back->job.end, JobEnd::Failed);
  EXPECT_EQ(back->job.exit_status, 3);
  EXPECT_EQ(back->next, 42);
  EXPECT_EQ(back->missed, 2);
  EXPECT_EQ(back->prompt, "(Pdb) ");
  InspectionReply no_prompt;
  no_prompt.kind = ReplyKind::Pending;
  const Result<InspectionReply> pending = decode_inspection_reply(encode_inspection_reply(no_prompt));
  ASSERT_TRUE(pending) << pending.error;
  EXPECT_EQ(pending->kind, ReplyKind::Pending);
  EXPECT_FALSE(pending->prompt.has_value());
}

TEST(InspectionMessages, WhatIsNotAReplyOfThisVersionIsAnErrorSayingSo) {
  for (const char* text : {"", "job running\n", "error: unknown query", "[1,2]", "{\"kind\":\"maybe\"}",
                           "{\"kind\":\"answer\",\"next\":\"x\"}", "{\"text\":\"no kind\"}"}) {
    const Result<InspectionReply> reply = decode_inspection_reply(text);
    EXPECT_FALSE(reply) << text;
    EXPECT_FALSE(reply.error.empty()) << text;
  }
  EXPECT_FALSE(decode_inspection_query("{\"ask\":\"reboot\"}"));
  EXPECT_FALSE(is_inspection_query("status json"));
}

TEST(InspectionMessages, ARefusalIsCutAtItsBound) {
  const Result<InspectionReply> reply =
      decode_inspection_reply(encode_inspection_reply(refused_reply(std::string(5000, 'x'))));
  ASSERT_TRUE(reply) << reply.error;
  EXPECT_EQ(reply->kind, ReplyKind::Refused);
  EXPECT_EQ(reply->text.size(), kMaxRefusalChars);
}

TEST(InspectionMessages, TheJobsEndIsReadFromItsExitStatus) {
  EXPECT_EQ(job_end_of_exit_status(0), JobEnd::Succeeded);
  EXPECT_EQ(job_end_of_exit_status(130), JobEnd::Stopped);
  EXPECT_EQ(job_end_of_exit_status(143), JobEnd::Stopped);
  EXPECT_EQ(job_end_of_exit_status(1), JobEnd::Failed);
  EXPECT_EQ(job_end_of_exit_status(137), JobEnd::Failed);
  EXPECT_EQ(describe_job_end({"ended", JobEnd::Succeeded, 0, ""}), "the job has ended: it succeeded");
  EXPECT_EQ(describe_job_end({"ended", JobEnd::Failed, 3, "rank 1 failed"}),
            "the job has ended: it failed (exit status 3); rank 1 failed");
  EXPECT_EQ(describe_job_end({"ended", JobEnd::Stopped, 130, ""}), "the job has ended: it was stopped (exit status 130)");
  EXPECT_EQ(describe_job_end({"running", JobEnd::NotEnded, 0, ""}), "");
}

}  // namespace
}  // namespace ddplaunch
