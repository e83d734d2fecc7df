// The field codecs launcher messages are declared with (wire/field_codecs.h), each on its own:
// numbers with their fallbacks and ranges, flags, text bounded when written and made printable
// when read, a typed line, a run nonce; and the declarations themselves: every message names
// each field once, and what it writes over a bound is cut to that bound.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "wire/field_codecs.h"
#include "wire/launcher_messages.h"
#include "wire/message_bounds.h"

namespace ddplaunch {
namespace {

using namespace messages;

template <class Codec, class Value>
std::optional<Value> read(const Codec& codec, const std::string* sent, Value start = {}) {
  Value value = start;
  if (!codec.read(sent, value)) return std::nullopt;
  return value;
}

TEST(FieldCodecs, IntFallsBackWhenMissingMalformedOrHugeAndRefusesOutsideItsRange) {
  const Int rank{.fallback = -1, .min = 0};
  const std::string seven = "7", junk = "7x", huge = "1073741825", negative = "-3";
  EXPECT_EQ((read<Int, int>(rank, &seven)), 7);
  EXPECT_FALSE((read<Int, int>(rank, nullptr))) << "missing: the fallback -1 is outside the range";
  EXPECT_FALSE((read<Int, int>(rank, &junk)));
  EXPECT_FALSE((read<Int, int>(rank, &huge)));
  EXPECT_FALSE((read<Int, int>(rank, &negative)));
  const Int exit_code{.fallback = 1};
  EXPECT_EQ((read<Int, int>(exit_code, &junk)), 1);
  EXPECT_EQ((read<Int, int>(exit_code, &negative)), -3);
  const Int seconds{.fallback = -1, .min = 0, .max = 3600};
  const std::string hour = "3600", more = "3601";
  EXPECT_EQ((read<Int, int>(seconds, &hour)), 3600);
  EXPECT_FALSE((read<Int, int>(seconds, &more)));
  EXPECT_EQ(exit_code.write(-3), "-3");
}

TEST(FieldCodecs, LongIsRequiredOrFallsBackAndRefusesBelowItsMinimum) {
  const std::string big = "5000000000", junk = "x", negative = "-1";
  EXPECT_EQ((read<Long, long>(Long{.required = true}, &big)), 5000000000L);
  EXPECT_FALSE((read<Long, long>(Long{.required = true}, nullptr)));
  EXPECT_FALSE((read<Long, long>(Long{.required = true}, &junk)));
  EXPECT_EQ((read<Long, long>(Long{.fallback = 0}, &junk)), 0);
  EXPECT_FALSE((read<Long, long>(Long{.fallback = 0, .min = 0}, &negative)));
}

TEST(FieldCodecs, AFlagIsOneOrFalse) {
  const std::string one = "1", yes = "yes";
  EXPECT_EQ((read<Flag, bool>(Flag{}, &one)), true);
  EXPECT_EQ((read<Flag, bool>(Flag{}, &yes, true)), false);
  EXPECT_EQ((read<Flag, bool>(Flag{}, nullptr, true)), false);
  EXPECT_EQ(Flag{}.write(true), "1");
  EXPECT_EQ(Flag{}.write(false), "0");
}

TEST(FieldCodecs, TextIsMadePrintableAsItIsShown) {
  const std::string sent = "a\x1b[2J\nb\nc";
  EXPECT_EQ((read<Text, std::string>(Text{}, &sent)), "a\\x1b[2J\\nb\\nc");
  EXPECT_EQ((read<Lines, std::string>(Lines{}, &sent)), "a\\x1b[2J\nb\nc");
  EXPECT_EQ((read<Entry, std::string>(Entry{}, &sent)), "a\\x1b[2J\n    b\n    c");
  EXPECT_EQ((read<Text, std::string>(Text{.fallback = "?"}, nullptr)), "?");
  const std::string empty;
  EXPECT_EQ((read<Text, std::string>(Text{.fallback = "?"}, &empty)), "") << "only a missing field falls back";
  EXPECT_EQ((Text{.fallback = "-", .empty_as_fallback = true}.write("")), "-");
  EXPECT_EQ(Text{.fallback = "?"}.write(""), "");
}

TEST(FieldCodecs, TextOverItsBoundIsCutWhereItsCodecSays) {
  const std::string long_text = std::string(100, 'a') + std::string(100, 'b');
  const std::string middle = Lines{.max_bytes = 64}.write(long_text);
  EXPECT_LE(middle.size(), 64u);
  EXPECT_NE(middle.find("bytes cut)"), std::string::npos);
  EXPECT_EQ(middle.front(), 'a');
  EXPECT_EQ(middle.back(), 'b');
  EXPECT_EQ((Text{.max_bytes = 16, .cut = Cut::End}.write(long_text)), std::string(16, 'a'));
  EXPECT_EQ(Lines{.max_bytes = 64}.write("short"), "short");
  EXPECT_EQ((read<Lines, std::string>(Lines{.max_bytes = 64}, &long_text)), long_text) << "cut when written only";
  const auto cut_again = read<Lines, std::string>(Lines{.max_bytes = 64, .cut_when_read = true}, &long_text);
  ASSERT_TRUE(cut_again);
  EXPECT_LE(cut_again->size(), 64u);
}

TEST(FieldCodecs, ATypedLineIsOneLineAsTypedAndARunNonceIsANonceOrNothing) {
  const TypedLine typed{.max_bytes = 64};
  EXPECT_EQ(typed.write("p x\nimport os"), "p x");
  EXPECT_LE(typed.write(std::string(100, 'x')).size(), 64u);
  const std::string escape = "p \x1b", two = "a\nb";
  EXPECT_EQ((read<TypedLine, std::string>(typed, &escape)), escape) << "never printed: passed as typed";
  EXPECT_FALSE((read<TypedLine, std::string>(typed, &two)));
  EXPECT_EQ((read<TypedLine, std::string>(typed, nullptr)), "");
  const std::string nonce = "0123abcd", forged = "run\x1b[2J";
  EXPECT_EQ((read<RunNonce, std::string>(RunNonce{}, &nonce)), nonce);
  EXPECT_EQ((read<RunNonce, std::string>(RunNonce{}, &forged, "x")), "");
}

// Records the names a declaration lists, as the writer would write them.
class NameRecorder {
 public:
  template <class Value, class Codec>
  void operator()(std::string_view name, const Value&, const Codec&) {
    add(std::string(name));
  }
  template <class Record>
  void each(std::string_view count_name, const std::vector<Record>&, std::size_t) {
    add(std::string(count_name));
    NameRecorder record;
    const Record empty{};
    WireFields<Record>::list(record, empty);
    for (const auto& name : record.names) add(name + ".N");
  }
  std::multiset<std::string> names;

 private:
  void add(std::string name) { names.insert(std::move(name)); }
};

template <class Payload>
void expect_each_name_once(const char* what) {
  NameRecorder recorder;
  const Payload empty{};
  WireFields<Payload>::list(recorder, empty);
  for (const auto& name : recorder.names) EXPECT_EQ(recorder.names.count(name), 1u) << what << ": " << name;
}

TEST(Declarations, EveryMessageNamesEachFieldOnce) {
  expect_each_name_once<FailureReport>("worker_failed");
  expect_each_name_once<NodeFinished>("node_finished");
  expect_each_name_once<NodeProblem>("node_problem");
  expect_each_name_once<NodeReport>("node_report");
  expect_each_name_once<RankStates>("rank_states");
  expect_each_name_once<ProbeResults>("probe_results");
  expect_each_name_once<TimelineEvents>("timeline_events");
  expect_each_name_once<RankOutput>("rank_output");
  expect_each_name_once<Restart>("restart");
  expect_each_name_once<Stop>("stop");
  expect_each_name_once<JobEnd>("job_end");
  expect_each_name_once<ProbeVerdict>("probe_verdict");
  expect_each_name_once<Standby>("standby");
  expect_each_name_once<OutputFilter>("output_filter");
  expect_each_name_once<FollowRank>("follow_rank");
  expect_each_name_once<CollectStacks>("collect_stacks");
  expect_each_name_once<RankStacksReply>("rank_stacks");
  expect_each_name_once<DebugStopped>("debug_stopped");
  expect_each_name_once<DebugOutput>("debug_output");
  expect_each_name_once<DebugResumed>("debug_resumed");
  expect_each_name_once<DebugInput>("debug_input");
  expect_each_name_once<DebugAttachGdb>("debug_attach_gdb");
}

// What a sender writes over a bound is cut to it (or, for lists, stops at it), whatever the
// payload holds.
TEST(Declarations, WhatIsWrittenOverABoundIsCutToIt) {
  const std::string huge(kMaxRankOutputBytes + 1, 'x');  // over every bound of one field
  const Generation g{1};
  EXPECT_LE(encode(g, RankOutput{1, huge, 0}).fields.at("lines").size(), kMaxRankOutputBytes);
  EXPECT_LE(encode(g, DebugOutput{1, huge, false}).fields.at("lines").size(), kMaxDebugOutputBytes);
  EXPECT_LE(encode(g, DebugInput{1, huge}).fields.at("line").size(), kMaxDebugInputBytes);

  RankStack stack;
  stack.rank = 0;
  stack.source = "a source far longer than sixteen bytes";
  stack.text = std::string(kMaxStackBytes + 1, 's');
  const rendezvous::Message stacks = encode(g, RankStacksReply{1, "h", std::vector<RankStack>(8, stack)});
  EXPECT_EQ(stacks.fields.at("source.0").size(), kMaxStackSourceBytes);
  EXPECT_LE(stacks.fields.at("text.0").size(), kMaxStackBytes);
  EXPECT_LE(encoded_field_bytes(stacks), kMaxMessageBytes);
  stack.text = "short";
  const rendezvous::Message many = encode(g, RankStacksReply{1, "h", std::vector<RankStack>(kMaxStacksPerMessage + 5, stack)});
  EXPECT_EQ(many.fields.at("count"), std::to_string(kMaxStacksPerMessage));

  preflight::ProbedLink link;
  link.ifname = "eth0";
  const auto links = decode_probe_results(encode(g, ProbeResults{std::vector<preflight::ProbedLink>(kMaxProbeLinks + 1, link)}));
  ASSERT_TRUE(links);
  EXPECT_EQ(links->links.size(), kMaxProbeLinks);
  link.result.error = huge;
  const auto cut_error = decode_probe_results(encode(g, ProbeResults{{link}}));
  ASSERT_TRUE(cut_error);
  EXPECT_EQ(cut_error->links[0].result.error.size(), kMaxProbeErrorBytes);

  FailureReport report;
  report.failure.tail.assign(20, huge);
  EXPECT_LE(encoded_field_bytes(encode(g, report)), kMaxMessageBytes);
  EXPECT_LE(encoded_field_bytes(encode(g, NodeProblem{huge + huge, 1})), kMaxMessageBytes);
}

}  // namespace
}  // namespace ddplaunch
