// Launcher messages on the wire (agent/launcher_messages, agent/message_bounds): failure
// reports, rank states and stacks, and the debug relay's messages round-trip through the
// rendezvous fields. Bounds: a failure report with a huge output tail still fits well under
// the rendezvous frame limit, keeps its last lines and the error line, and cuts long lines
// visibly ("…(N bytes cut)…"); any oversized field of any message is trimmed.
#include <gtest/gtest.h>

#include <string>

#include "wire/launcher_messages.h"
#include "policy/failure_codec.h"
#include "wire/message_bounds.h"
#include "stack_samples.h"

namespace ddplaunch {
namespace {

using namespace stack_samples;

FailureReport report_with_tail(std::deque<std::string> tail) {
  FailureReport r;
  r.host = "gpu07";
  r.failure.global_rank = 3;
  r.failure.detail = "output matches 'NCCL error: unhandled system error'";
  r.failure.tail = std::move(tail);
  return r;
}

TEST(LauncherMessages, FailureRoundTripsThroughRendezvousFields) {
  WorkerFailure f;
  f.node_rank = 1;
  f.global_rank = 5;
  f.local_rank = 1;
  f.pid = 4321;
  f.phase = FailurePhase::Init;
  f.kind = FailureKind::InitFailed;
  f.status = ExitStatus{false, 3, 0, false};
  f.detail = "ncclCommInitRank failed: unhandled cuda error";
  f.tail = {"line a", "line b"};
  auto decoded = messages::decode_failure(messages::encode(Generation{2}, FailureReport{f, "gpu07"}));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->host, "gpu07");
  EXPECT_EQ(decoded->failure.global_rank, 5);
  EXPECT_EQ(decoded->failure.local_rank, 1);
  EXPECT_EQ(decoded->failure.node_rank, 1);
  EXPECT_EQ(decoded->failure.pid, 4321);
  EXPECT_EQ(decoded->failure.phase, FailurePhase::Init);
  EXPECT_EQ(decoded->failure.detail, f.detail);
  ASSERT_TRUE(decoded->failure.status);
  EXPECT_EQ(decoded->failure.status->code, 3);
  EXPECT_EQ(decoded->failure.tail, f.tail);
  EXPECT_EQ(decoded->failure.kind, FailureKind::InitFailed);
  EXPECT_FALSE(messages::decode_failure(messages::encode(Generation{0}, messages::Stop{"x", 1})));
}

// The wire and the saved state share one codec: a core dump reported by a node reaches the
// master's root cause, and a report that is not a whole one is refused, not guessed at.
TEST(LauncherMessages, ACoreDumpSurvivesTheWireAndAPartialReportIsRefused) {
  WorkerFailure f;
  f.global_rank = 2;
  f.phase = FailurePhase::Runtime;
  f.status = ExitStatus{true, 0, 11, true};
  f.init_signature = "c10d: address already in use";
  auto decoded = messages::decode_failure(messages::encode(Generation{4}, FailureReport{f, "gpu02"}));
  ASSERT_TRUE(decoded);
  ASSERT_TRUE(decoded->failure.status);
  EXPECT_TRUE(decoded->failure.status->signaled);
  EXPECT_EQ(decoded->failure.status->signal, 11);
  EXPECT_TRUE(decoded->failure.status->core_dumped);
  EXPECT_EQ(decoded->failure.init_signature, f.init_signature);
  rendezvous::Message partial = messages::encode(Generation{4}, FailureReport{f, "gpu02"});
  partial.fields["report"] = R"({"host": "gpu02", "global_rank": 2})";
  EXPECT_FALSE(messages::decode_failure(partial));
  partial.fields["report"] = "not json {";
  EXPECT_FALSE(messages::decode_failure(partial));
}

TEST(LauncherMessages, RankStatesCarryProgressAndOlderLinesStillDecode) {
  messages::RankStates states{"h", {}};
  RankReport r = running(3);
  r.steps = 120;
  r.max_interval_ms = 450;
  r.progress_age_ms = 2300;
  r.section = "checkpoint";
  states.ranks.push_back(r);
  auto decoded = messages::decode_rank_states(messages::encode(Generation{4}, states));
  ASSERT_TRUE(decoded);
  ASSERT_EQ(decoded->ranks.size(), 1u);
  EXPECT_EQ(decoded->ranks[0].steps, 120);
  EXPECT_EQ(decoded->ranks[0].max_interval_ms, 450);
  EXPECT_EQ(decoded->ranks[0].progress_age_ms, 2300);
  EXPECT_EQ(decoded->ranks[0].section, "checkpoint");
  rendezvous::Message old = messages::encode(Generation{4}, states);
  old.fields["ranks"] = "3 77 running 1 running\n";  // a launcher without progress reports
  auto from_old = messages::decode_rank_states(old);
  ASSERT_TRUE(from_old);
  EXPECT_EQ(from_old->ranks[0].progress_age_ms, -1);
  EXPECT_TRUE(from_old->ranks[0].section.empty());
}

TEST(LauncherMessages, ARanksMeasuredComputeAndWaitTravelWhenMeasuredAndNonsenseIsLeftOut) {
  messages::RankStates states{"h", {}};
  RankReport measured = running(1);
  measured.steps = 10;
  measured.span_ms = 2000;
  measured.wait_ms = 1500;
  RankReport unmeasured = running(2);
  unmeasured.steps = 10;
  states.ranks = {measured, unmeasured};
  const rendezvous::Message message = messages::encode(Generation{1}, states);
  EXPECT_EQ(message.fields.at("ranks").find(" 2000 1500\n"), message.fields.at("ranks").find('\n') - 10);
  auto decoded = messages::decode_rank_states(message);
  ASSERT_TRUE(decoded);
  ASSERT_EQ(decoded->ranks.size(), 2u);
  EXPECT_EQ(decoded->ranks[0].span_ms, 2000);
  EXPECT_EQ(decoded->ranks[0].wait_ms, 1500);
  EXPECT_EQ(decoded->ranks[1].span_ms, -1);
  EXPECT_EQ(decoded->ranks[1].wait_ms, -1);
  rendezvous::Message hostile = message;
  hostile.fields["ranks"] = "1 77 running 1 running 10 0 5 - 2000 9000\n2 78 running 1 running 10 0 5 - -3 0\n";
  auto refused_pairs = messages::decode_rank_states(hostile);
  ASSERT_TRUE(refused_pairs);  // the ranks still count; the waits above their spans do not
  for (const auto& r : refused_pairs->ranks) EXPECT_EQ(r.span_ms, -1);
}

// A rank's CPU share follows the shim's pair (-1 -1 when the shim measured nothing), where an
// older reader ignores it; the node's signals are a field of their own that an older reader
// does not know.
TEST(LauncherMessages, TheCpuShareAndTheNodesSignalsTravelAndAnOlderReaderIgnoresThem) {
  messages::RankStates states{"h", {}};
  RankReport measured = running(1);
  measured.span_ms = 2000;
  measured.wait_ms = 100;
  measured.cpu_millicores = 50;
  RankReport cpu_only = running(2);
  cpu_only.cpu_millicores = 980;
  states.ranks = {measured, cpu_only};
  states.signals.steal = 0.01;
  states.signals.cpu_pressure = 0.8125;
  states.signals.throttled = 0.92;
  states.signals.throttled_cgroup = "/ddpl straggler/\x1b[31m";
  const rendezvous::Message message = messages::encode(Generation{1}, states);
  EXPECT_NE(message.fields.at("ranks").find(" - 2000 100 50\n"), std::string::npos) << message.fields.at("ranks");
  EXPECT_NE(message.fields.at("ranks").find(" - -1 -1 980\n"), std::string::npos) << message.fields.at("ranks");
  auto decoded = messages::decode_rank_states(message);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->ranks[0].cpu_millicores, 50);
  EXPECT_EQ(decoded->ranks[0].span_ms, 2000);
  EXPECT_EQ(decoded->ranks[1].cpu_millicores, 980);
  EXPECT_EQ(decoded->ranks[1].span_ms, -1);
  EXPECT_DOUBLE_EQ(*decoded->signals.steal, 0.01);
  EXPECT_DOUBLE_EQ(*decoded->signals.cpu_pressure, 0.8125);
  EXPECT_FALSE(decoded->signals.memory_pressure);
  EXPECT_DOUBLE_EQ(*decoded->signals.throttled, 0.92);
  EXPECT_EQ(decoded->signals.throttled_cgroup, "/ddpl straggler/\\x1b[31m");  // made printable
  // A launcher of before: no signals field, no CPU word.
  rendezvous::Message old = message;
  old.fields.erase("signals");
  old.fields["ranks"] = "1 77 running 1 running 10 0 5 - 2000 100\n";
  auto from_old = messages::decode_rank_states(old);
  ASSERT_TRUE(from_old);
  EXPECT_EQ(from_old->signals, NodeSignals{});
  EXPECT_EQ(from_old->ranks[0].cpu_millicores, -1);
  // Nonsense is left out, a newer name ignored; the message still counts.
  rendezvous::Message odd = message;
  odd.fields["signals"] = "steal 7\ncpu_pressure -0.5\nio_pressure x\nthrottled\nfuture_signal 0.5\nmemory_pressure 0.25\n";
  odd.fields["ranks"] = "1 77 running 1 running 10 0 5 - 2000 100 -7\n";
  auto from_odd = messages::decode_rank_states(odd);
  ASSERT_TRUE(from_odd);
  EXPECT_FALSE(from_odd->signals.steal);
  EXPECT_FALSE(from_odd->signals.cpu_pressure);
  EXPECT_FALSE(from_odd->signals.io_pressure);
  EXPECT_FALSE(from_odd->signals.throttled);
  EXPECT_DOUBLE_EQ(*from_odd->signals.memory_pressure, 0.25);
  EXPECT_EQ(from_odd->ranks[0].cpu_millicores, -1);
}

TEST(LauncherMessages, StackMessagesRoundTripAndStayBounded) {
  auto ask = messages::decode_collect_stacks(messages::encode(Generation{2}, messages::CollectStacks{9}));
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->request, 9);
  messages::RankStacksReply reply{9, "node-a", {python_stack(0, kWaitingRaw), python_stack(1, kStalledRaw)}};
  reply.stacks[1].text = std::string(200 * 1024, 'x');  // a huge stack is cut, not dropped
  rendezvous::Message m = messages::encode(Generation{2}, reply);
  EXPECT_LE(messages::encoded_field_bytes(m), messages::kMaxMessageBytes);
  auto back = messages::decode_rank_stacks(m);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->stacks.size(), 2u);
  EXPECT_EQ(back->stacks[0].text, reply.stacks[0].text);
  EXPECT_EQ(back->stacks[1].rank, 1);
  EXPECT_LE(back->stacks[1].text.size(), messages::kMaxStackBytes);
  m.fields["count"] = "5000";
  EXPECT_FALSE(messages::decode_rank_stacks(m)) << "a count above the bound is refused";
}

// The debug relay's messages: every field round-trips; text from another node comes back
// printable (a rank's debugger cannot drive the console's terminal); malformed ones are refused.
TEST(DebugMessages, RoundTripAndTextFromAnotherNodeIsMadePrintable) {
  messages::DebugStopped stop{3, 1, 4242, "h2", "/w/train.py", "load_batch", "x = y", "raised ValueError", 88};
  auto stopped = messages::decode_debug_stopped(messages::encode(Generation{2}, stop));
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->rank, 3);
  EXPECT_EQ(stopped->local_rank, 1);
  EXPECT_EQ(stopped->pid, 4242);
  EXPECT_EQ(stopped->file, "/w/train.py");
  EXPECT_EQ(stopped->line, 88);
  EXPECT_EQ(stopped->function, "load_batch");
  EXPECT_EQ(stopped->reason, "raised ValueError");
  auto output = messages::decode_debug_output(messages::encode(Generation{2}, messages::DebugOutput{3, "1032\n\x1b]0;owned\x07\n", true}));
  ASSERT_TRUE(output);
  EXPECT_TRUE(output->prompt);
  EXPECT_EQ(output->lines.find('\x1b'), std::string::npos) << output->lines;
  EXPECT_EQ(output->lines.substr(0, 5), "1032\n");
  auto input = messages::decode_debug_input(messages::encode(Generation{2}, messages::DebugInput{3, "p x\nimport os"}));
  ASSERT_TRUE(input);
  EXPECT_EQ(input->line, "p x");  // one line: a newline would be a second command
  rendezvous::Message forged = messages::encode(Generation{2}, messages::DebugResumed{3});
  forged.fields["rank"] = "-4";
  EXPECT_FALSE(messages::decode_debug_resumed(forged));
  EXPECT_FALSE(messages::decode_debug_input(messages::encode(Generation{2}, messages::DebugOutput{3, "x", false})));
}

TEST(MessageBounds, AHugeTailIsCutPerLineAndInTotalKeepingTheLastLines) {
  std::deque<std::string> tail;
  for (int i = 0; i < 19; ++i) tail.push_back(std::string(64 * 1024, 'x'));
  tail.push_back("NCCL error: unhandled system error");
  auto message = messages::encode(Generation{0}, report_with_tail(tail));
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
  auto standby = messages::decode_standby(messages::encode(Generation{0}, messages::Standby{"you wait", "0123abcd"}));
  ASSERT_TRUE(standby);
  EXPECT_EQ(standby->run_nonce, "0123abcd");
  auto forged = messages::decode_standby(messages::encode(Generation{0}, messages::Standby{"you wait", "run\x1b[2J"}));
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->run_nonce, "");
}

// A reason a node logs as one entry cannot forge a log line: every line after the first is
// indented, escapes made visible (the stop reason reached the terminal raw before).
TEST(MessageBounds, AMultiLineReasonCannotStartALineOfItsOwn) {
  const std::string forged = "disk full\n12:00:00.000 ddplaunch info: job succeeded\x1b[2K";
  auto stop = messages::decode_stop(messages::encode(Generation{3}, messages::Stop{forged, 1}));
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->reason, "disk full\n    12:00:00.000 ddplaunch info: job succeeded\\x1b[2K");
  auto restart = messages::decode_restart(messages::encode(Generation{3}, messages::Restart{forged}));
  ASSERT_TRUE(restart);
  EXPECT_EQ(restart->reason.find("\n1"), std::string::npos) << restart->reason;
  auto problem = messages::decode_node_problem(messages::encode(Generation{3}, messages::NodeProblem{forged, 1}));
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->message.find("\n1"), std::string::npos) << problem->message;
}

TEST(MessageBounds, AnyOversizedFieldIsTrimmedToFitTheFrame) {
  // A problem text full of characters the wire escapes (each takes two bytes there).
  auto message = messages::encode(Generation{0}, messages::NodeProblem{std::string(3 << 20, '\n'), 1});
  EXPECT_LE(messages::encoded_field_bytes(message), messages::kMaxMessageBytes);
  auto problem = messages::decode_node_problem(message);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->message.find("bytes cut)"), std::string::npos);
  EXPECT_EQ(problem->exit_code, 1);
}

}  // namespace
}  // namespace ddplaunch
