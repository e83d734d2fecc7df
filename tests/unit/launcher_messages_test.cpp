// Bounds on launcher messages: a failure report with a huge output tail still fits well under
// the rendezvous frame limit, keeps its last lines and the error line, and cuts long lines
// visibly ("…(N bytes cut)…"); any oversized field of any message is trimmed.
#include <gtest/gtest.h>

#include <string>

#include "agent/launcher_messages.h"
#include "policy/failure_codec.h"
#include "agent/message_bounds.h"

namespace ddplaunch {
namespace {

FailureReport report_with_tail(std::deque<std::string> tail) {
  FailureReport r;
  r.host = "gpu07";
  r.failure.global_rank = 3;
  r.failure.detail = "output matches 'NCCL error: unhandled system error'";
  r.failure.tail = std::move(tail);
  return r;
}

// The debug relay's messages: every field round-trips; text from another node comes back
// printable (a rank's debugger cannot drive the console's terminal); malformed ones are refused.
TEST(DebugMessages, RoundTripAndTextFromAnotherNodeIsMadePrintable) {
  messages::DebugStopped stop{3, 1, 4242, "h2", "/w/train.py", "load_batch", "x = y", "raised ValueError", 88};
  auto stopped = messages::decode_debug_stopped(messages::encode(2, stop));
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->rank, 3);
  EXPECT_EQ(stopped->local_rank, 1);
  EXPECT_EQ(stopped->pid, 4242);
  EXPECT_EQ(stopped->file, "/w/train.py");
  EXPECT_EQ(stopped->line, 88);
  EXPECT_EQ(stopped->function, "load_batch");
  EXPECT_EQ(stopped->reason, "raised ValueError");
  auto output = messages::decode_debug_output(messages::encode(2, messages::DebugOutput{3, "1032\n\x1b]0;owned\x07\n", true}));
  ASSERT_TRUE(output);
  EXPECT_TRUE(output->prompt);
  EXPECT_EQ(output->lines.find('\x1b'), std::string::npos) << output->lines;
  EXPECT_EQ(output->lines.substr(0, 5), "1032\n");
  auto input = messages::decode_debug_input(messages::encode(2, messages::DebugInput{3, "p x\nimport os"}));
  ASSERT_TRUE(input);
  EXPECT_EQ(input->line, "p x");  // one line: a newline would be a second command
  rendezvous::Message forged = messages::encode(2, messages::DebugResumed{3});
  forged.fields["rank"] = "-4";
  EXPECT_FALSE(messages::decode_debug_resumed(forged));
  EXPECT_FALSE(messages::decode_debug_input(messages::encode(2, messages::DebugOutput{3, "x", false})));
}

TEST(MessageBounds, AHugeTailIsCutPerLineAndInTotalKeepingTheLastLines) {
  std::deque<std::string> tail;
  for (int i = 0; i < 19; ++i) tail.push_back(std::string(64 * 1024, 'x'));
  tail.push_back("NCCL error: unhandled system error");
  auto message = messages::encode(0, report_with_tail(tail));
  EXPECT_LE(messages::encoded_field_bytes(message), messages::kMaxMessageBytes);
  auto decoded = messages::decode_failure(message);
  ASSERT_TRUE(decoded);
  const auto& lines = decoded->failure.tail;
  ASSERT_EQ(lines.size(), 20u);
  EXPECT_EQ(lines.back(), "NCCL error: unhandled system error");
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    EXPECT_LE(lines[i].size(), messages::kMaxTailLineBytes);
    EXPECT_NE(lines[i].find(" bytes cut)…"), std::string::npos) << lines[i].substr(0, 80);
  }
  EXPECT_EQ(decoded->failure.detail, "output matches 'NCCL error: unhandled system error'");
}

TEST(MessageBounds, CutMiddleSaysHowMuchWasCutAndKeepsBothEnds) {
  const std::string line = "HEAD" + std::string(5000, '.') + "TAIL";
  const std::string cut = messages::cut_middle(line, 100);
  EXPECT_LE(cut.size(), 100u);
  EXPECT_EQ(cut.rfind("HEAD", 0), 0u);
  EXPECT_EQ(cut.substr(cut.size() - 4), "TAIL");
  const auto at = cut.find("…(");
  const std::size_t cut_count = std::stoul(cut.substr(at + std::string("…(").size()));
  EXPECT_EQ(line.size() - cut_count + std::string("…( bytes cut)…").size() + std::to_string(cut_count).size(),
            cut.size());
  EXPECT_EQ(messages::cut_middle("short", 100), "short");
}

TEST(MessageBounds, NeverSplitsAUtf8Character) {
  std::string line;
  for (int i = 0; i < 1000; ++i) line += "é";  // two bytes each
  const std::string cut = messages::cut_middle(line, 101);
  const auto at = cut.find("…(");
  const auto end = cut.find(")…") + std::string(")…").size();
  EXPECT_EQ(at % 2, 0u) << cut;
  EXPECT_EQ((cut.size() - end) % 2, 0u) << cut;
}

TEST(MessageBounds, ManyLinesKeepTheNewestAndCountTheOthers) {
  std::deque<std::string> tail;
  for (int i = 0; i < 500; ++i) tail.push_back("line " + std::to_string(i) + " " + std::string(900, 'y'));
  auto bounded = messages::bounded_tail(tail);
  std::size_t total = 0;
  for (const auto& l : bounded) total += l.size() + 1;
  EXPECT_LE(total, messages::kMaxTailBytes);
  EXPECT_EQ(bounded.back().rfind("line 499 ", 0), 0u);
  EXPECT_NE(bounded.front().find("earlier lines cut)"), std::string::npos) << bounded.front();
}

TEST(MessageBounds, AnOversizedTailFromAnotherLauncherIsBoundedWhenDecoded) {
  // Built by hand, as a hostile node could send it (its own bounds skipped): 900 KB in 30 lines.
  FailureReport sent;
  sent.failure.global_rank = 1;
  for (int i = 0; i < 30; ++i) sent.failure.tail.push_back(std::string(30000, 'z'));
  rendezvous::Message m;
  m.type = "worker_failed";
  m.fields["report"] = encode_failure_report(sent);
  auto decoded = messages::decode_failure(m);
  ASSERT_TRUE(decoded);
  std::size_t total = 0;
  for (const auto& line : decoded->failure.tail) total += line.size() + 1;
  EXPECT_LE(total, messages::kMaxTailBytes);
}

// Escape sequences a peer sends must not reach this terminal raw (a clear-screen,
// a forged coloured "JOB SUCCEEDED"). Every free text decoded from a peer is made printable;
// the lines of a tail or a stack stay lines.
TEST(MessageBounds, EscapeSequencesFromAPeerAreMadeVisibleWhenDecoded) {
  FailureReport sent;
  sent.failure.global_rank = 1;
  sent.host = "gpu\x1b[2J07";
  sent.failure.detail = "boom\x1b]0;owned\x07";
  sent.failure.tail = {"first\x1b[31m red\nsecond\r\x1b[1A over"};  // one line that is two
  rendezvous::Message m;
  m.type = "worker_failed";
  m.fields["report"] = encode_failure_report(sent);
  auto decoded = messages::decode_failure(m);
  ASSERT_TRUE(decoded);
  auto no_escape = [](const std::string& text) { return text.find('\x1b') == std::string::npos && text.find('\r') == std::string::npos && text.find('\x07') == std::string::npos; };
  EXPECT_TRUE(no_escape(decoded->host)) << decoded->host;
  EXPECT_TRUE(no_escape(decoded->failure.detail)) << decoded->failure.detail;
  ASSERT_EQ(decoded->failure.tail.size(), 2u);
  for (const auto& line : decoded->failure.tail) EXPECT_TRUE(no_escape(line)) << line;
  EXPECT_NE(decoded->failure.tail[0].find("first\\x1b[31m red"), std::string::npos) << decoded->failure.tail[0];

  rendezvous::Message stacks;
  stacks.type = "rank_stacks";
  stacks.fields["request"] = "1";
  stacks.fields["count"] = "1";
  stacks.fields["rank.0"] = "0";
  stacks.fields["text.0"] = "Thread 1\n  File \"x.py\"\x1b[8m hidden\n";
  auto reply = messages::decode_rank_stacks(stacks);
  ASSERT_TRUE(reply);
  ASSERT_EQ(reply->stacks.size(), 1u);
  EXPECT_TRUE(no_escape(reply->stacks[0].text)) << reply->stacks[0].text;
  EXPECT_NE(reply->stacks[0].text.find("Thread 1\n"), std::string::npos) << "its lines were joined";
}

// A hot spare learns the run it waits in from its standby message, as an assigned node does
// from its assignment (an etcd coordinator resumes only its own run's state); a value that is
// not a nonce is dropped.
TEST(MessageBounds, AStandbyCarriesTheRunNonceAndNothingElse) {
  auto standby = messages::decode_standby(messages::encode(0, messages::Standby{"you wait", "0123abcd"}));
  ASSERT_TRUE(standby);
  EXPECT_EQ(standby->run_nonce, "0123abcd");
  auto forged = messages::decode_standby(messages::encode(0, messages::Standby{"you wait", "run\x1b[2J"}));
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->run_nonce, "");
}

// A reason a node logs as one entry cannot forge a log line: every line after the first is
// indented, escapes made visible (the stop reason reached the terminal raw before).
TEST(MessageBounds, AMultiLineReasonCannotStartALineOfItsOwn) {
  const std::string forged = "disk full\n12:00:00.000 ddplaunch info: job succeeded\x1b[2K";
  auto stop = messages::decode_stop(messages::encode(3, messages::Stop{forged, 1}));
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->reason, "disk full\n    12:00:00.000 ddplaunch info: job succeeded\\x1b[2K");
  auto restart = messages::decode_restart(messages::encode(3, messages::Restart{forged}));
  ASSERT_TRUE(restart);
  EXPECT_EQ(restart->reason.find("\n1"), std::string::npos) << restart->reason;
  auto problem = messages::decode_node_problem(messages::encode(3, messages::NodeProblem{forged, 1}));
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->message.find("\n1"), std::string::npos) << problem->message;
}

TEST(MessageBounds, AnyOversizedFieldIsTrimmedToFitTheFrame) {
  // A problem text full of characters the wire escapes (each takes two bytes there).
  auto message = messages::encode(0, messages::NodeProblem{std::string(3 << 20, '\n'), 1});
  EXPECT_LE(messages::encoded_field_bytes(message), messages::kMaxMessageBytes);
  auto problem = messages::decode_node_problem(message);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->message.find("bytes cut)"), std::string::npos);
  EXPECT_EQ(problem->exit_code, 1);
}

}  // namespace
}  // namespace ddplaunch
