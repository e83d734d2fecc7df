// Every launcher message on the wire, as a table: its fields exactly as a node and a master of
// this build write them (the format both ends of a job must agree on), and each message back
// whole after a decode and a second encode.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <string>

#include <fmt/format.h>

#include "message_samples.h"
#include "policy/failure_codec.h"
#include "timeline/timeline_wire.h"

namespace ddplaunch {
namespace {

// The message as text, one field a line in key order; bytes outside printable ASCII as \xNN,
// a run of 16 or more of one letter as {N*c}.
std::string shown(const rendezvous::Message& m) {
  std::string out = m.type + " generation " + std::to_string(m.generation.value) + "\n";
  for (const auto& [key, value] : m.fields) {
    out += key + "=";
    for (std::size_t i = 0; i < value.size();) {
      const unsigned char c = static_cast<unsigned char>(value[i]);
      std::size_t run = 1;
      while (i + run < value.size() && value[i + run] == value[i]) ++run;
      if (run >= 16 && std::isalpha(c)) {
        out += fmt::format("{{{}*{}}}", run, static_cast<char>(c));
        i += run;
        continue;
      }
      out += c >= 0x20 && c < 0x7f && c != '\\' ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
      ++i;
    }
    out += "\n";
  }
  return out;
}

// What the messages looked like on the wire before their codecs were derived from one
// declaration each: the declarations must write them byte for byte.
const std::map<messages::Kind, std::string>& expected_on_the_wire() {
  static const std::map<messages::Kind, std::string> expected = {
      {messages::Kind::WorkerFailed,
       "worker_failed generation 4\n"
       "report={\"detail\":\"ncclCommInitRank failed: unhandled cuda error\",\"global_rank\":5,\"host\":\"gpu07\",\"init_signature\":\"unhandled cuda error\",\"kind\":\"init_failed\",\"local_rank\":1,\"log_file\":\"/logs/rank5.log\",\"node_rank\":1,\"phase\":\"init\",\"pid\":4321,\"status\":{\"code\":3,\"core_dumped\":false,\"signal\":0,\"signaled\":false},\"tail\":[\"line a\",\"line b\"]}\n"
      },
      {messages::Kind::NodeFinished,
       "node_finished generation 4\n"
       "exit_code=3\n"
       "summary=rank 2 exited with 3\\x0arank 3 stopped\n"
      },
      {messages::Kind::NodeProblem,
       "node_problem generation 4\n"
       "exit_code=2\n"
       "message=no GPU visible\n"
      },
      {messages::Kind::NodeReport,
       "node_report generation 4\n"
       "nic=eth0\n"
       "ok=1\n"
       "problems=clock skew 3 s\n"
      },
      // Since the node's explaining signals: `signals` is a field an older master never looks
      // up, and a rank's CPU share the word after the ones an older reader takes (its span and
      // wait, "-1 -1" here, which it leaves out); every older field is written as before.
      {messages::Kind::RankStates,
       "rank_states generation 4\n"
       "host=gpu07\n"
       "log_dir=/logs\n"
       "ranks=2 77 running 1 running 120 450 2300 checkpoint -1 -1 950\\x0a3 78 init 0 - 0 0 -1 -\\x0a\n"
       "signals=steal 0.0100\\x0acpu_pressure 0.8125\\x0athrottled 0.9200 /batch/job7\\x0a\n"
      },
      {messages::Kind::ProbeResults,
       "probe_results generation 4\n"
       "links=0\\x091\\x09eth0\\x0910.0.0.1\\x0910.0.0.2:41233\\x091\\x090.250000\\x099400.000000\\x09\\x0a1\\x090\\x09eth0\\x0910.0.0.1\\x0910.0.0.2:41233\\x090\\x09-1.000000\\x09-1.000000\\x09timed out after 2 s\\x0a\n"
      },
      {messages::Kind::TimelineEvents,
       "timeline_events generation 4\n"
       "events=1500\\x092\\x093\\x09i\\x09running\\x09rank\\x09after 2.1 s of init\\x0a\n"
       "sent_at_us=987654321\n"
      },
      {messages::Kind::RankOutput,
       "rank_output generation 4\n"
       "dropped=5\n"
       "lines=step 1\\x0astep 2\\x0a\n"
       "rank=2\n"
      },
      {messages::Kind::Restart,
       "restart generation 4\n"
       "reason=rank 5 failed in init\n"
      },
      {messages::Kind::Stop,
       "stop generation 4\n"
       "exit_code=3\n"
       "reason=the restart budget is spent\n"
      },
      {messages::Kind::JobEnd,
       "job_end generation 4\n"
       "exit_code=7\n"
      },
      {messages::Kind::Resume,
       "resume generation 4\n"
      },
      {messages::Kind::ProbeVerdict,
       "probe_verdict generation 4\n"
       "ifname=ib0\n"
      },
      {messages::Kind::Standby,
       "standby generation 4\n"
       "reason=you are a spare\n"
       "run=0123abcd\n"
      },
      {messages::Kind::OutputFilter,
       "output_filter generation 4\n"
       "ranks=1,5-7\n"
      },
      {messages::Kind::FollowRank,
       "follow_rank generation 4\n"
       "rank=2\n"
       "seconds=30\n"
      },
      {messages::Kind::CollectStacks,
       "collect_stacks generation 4\n"
       "request=9\n"
      },
      {messages::Kind::RankStacks,
       "rank_stacks generation 4\n"
       "count=2\n"
       "host=gpu07\n"
       "pid.0=4000\n"
       "pid.1=4001\n"
       "rank.0=0\n"
       "rank.1=1\n"
       "request=9\n"
       "source.0=python\n"
       "source.1=python\n"
       "text.0=  File \"/w/train.py\", line 3 in main\\x0a\n"
       "text.1=  File \"/w/train.py\", line 3 in main\\x0a\n"
      },
      {messages::Kind::DebugStopped,
       "debug_stopped generation 4\n"
       "code=x = y\n"
       "file=/w/train.py\n"
       "function=load_batch\n"
       "host=h2\n"
       "line=88\n"
       "local_rank=1\n"
       "pid=4242\n"
       "rank=3\n"
       "reason=raised ValueError\n"
      },
      {messages::Kind::DebugOutput,
       "debug_output generation 4\n"
       "asks=line\n"
       "lines=(Pdb) \n"
       "prompt=1\n"
       "rank=3\n"
      },
      {messages::Kind::DebugResumed,
       "debug_resumed generation 4\n"
       "rank=3\n"
      },
      {messages::Kind::DebugInput,
       "debug_input generation 4\n"
       "line=p x\n"
       "rank=3\n"
      },
      {messages::Kind::DebugAttachGdb,
       "debug_attach_gdb generation 4\n"
       "rank=3\n"
      },
  };
  return expected;
}

TEST(WireFormat, EveryMessageIsWrittenAsBefore) {
  const auto samples = message_samples::all();
  ASSERT_EQ(samples.size(), 23u) << "one sample per messages::Kind";
  for (const auto& sample : samples) {
    const auto expected = expected_on_the_wire().find(sample.kind);
    ASSERT_NE(expected, expected_on_the_wire().end()) << shown(sample.sent);
    EXPECT_EQ(shown(sample.sent), expected->second);
  }
}

TEST(WireFormat, EveryMessageSurvivesADecodeAndASecondEncode) {
  for (const auto& sample : message_samples::all()) {
    EXPECT_EQ(messages::kind_of(sample.sent), sample.kind) << sample.sent.type;
    const auto back = sample.back(sample.sent);
    ASSERT_TRUE(back) << "refused: " << shown(sample.sent);
    EXPECT_EQ(shown(*back), shown(sample.sent));
  }
}

// Messages as a hostile or broken peer could send them: escapes, line breaks and bells in every
// text, numbers out of range, fields missing or over their bounds. Each is refused, or comes
// back made printable and bounded (shown here encoded again) exactly as before.
struct Hostile {
  std::string label;
  rendezvous::Message sent;
};

const std::string kEvil = "a\x1b[2Jb\r\nc\x07" "d";

rendezvous::Message raw(messages::Kind kind, std::map<std::string, std::string> fields) {
  rendezvous::Message m;
  m.type = std::string(messages::kind_name(kind));
  m.generation = Generation{6};
  m.fields = std::move(fields);
  return m;
}

std::string evil_failure_report() {
  FailureReport r = message_samples::sample_failure();
  r.host = kEvil;
  r.failure.detail = kEvil;
  r.failure.init_signature = kEvil;
  r.failure.log_file = kEvil;
  r.failure.tail = {kEvil, std::string(1100, 'z')};
  return encode_failure_report(r);
}

std::string evil_events() {
  auto events = message_samples::sample_events();
  events[0].name = kEvil;
  events[0].category = kEvil;
  events[0].detail = kEvil;
  return timeline::encode_events(events);
}

std::vector<Hostile> hostile_messages() {
  using messages::Kind;
  const std::string long_stack = kEvil + std::string(20 * 1024, 's');
  return {
      {"failure, every text hostile", raw(Kind::WorkerFailed, {{"report", evil_failure_report()}})},
      {"failure, not a report", raw(Kind::WorkerFailed, {{"report", "{}"}})},
      {"failure, no report", raw(Kind::WorkerFailed, {})},
      {"finished", raw(Kind::NodeFinished, {{"exit_code", "9999999999"}, {"summary", kEvil}})},
      {"problem, no exit code", raw(Kind::NodeProblem, {{"message", kEvil}})},
      {"problem, nothing", raw(Kind::NodeProblem, {})},
      {"report", raw(Kind::NodeReport, {{"ok", "yes"}, {"nic", kEvil}, {"problems", kEvil}})},
      {"report, no nic", raw(Kind::NodeReport, {{"ok", "1"}})},
      {"rank states", raw(Kind::RankStates, {{"host", kEvil}, {"log_dir", kEvil},
                                             {"ranks", "2 77 running 1 x 1 2 3 s\x1b[2J\n4 5 init 0 -\n"}})},
      {"rank states, no host", raw(Kind::RankStates, {{"ranks", ""}})},
      {"rank states, bad phase", raw(Kind::RankStates, {{"ranks", "2 77 flying 1 x\n"}})},
      {"rank states, negative steps", raw(Kind::RankStates, {{"ranks", "2 77 running 1 x -1 2 3 s\n"}})},
      {"probe results", raw(Kind::ProbeResults, {{"links", "0\t1\teth0\t1.2.3.4\t5.6.7.8:9\t1\t0.5\t10\tboom\x1b[2J\n"
                                                           "1\t0\teth1\ta\tb\t0\t1\t2\n"}})},
      {"probe results, long ifname", raw(Kind::ProbeResults, {{"links", "0\t1\teth0123456789abcd\ta\tb\t1\t1\t1\t\n"}})},
      {"probe results, not a number", raw(Kind::ProbeResults, {{"links", "0\tx\teth0\ta\tb\t1\t1\t1\t\n"}})},
      {"timeline", raw(Kind::TimelineEvents, {{"sent_at_us", "12"}, {"events", evil_events()}})},
      {"timeline, no clock", raw(Kind::TimelineEvents, {{"events", evil_events()}})},
      {"timeline, no events", raw(Kind::TimelineEvents, {{"sent_at_us", "12"}})},
      {"output", raw(Kind::RankOutput, {{"rank", "2"}, {"lines", kEvil}, {"dropped", "3"}})},
      {"output, negative drops", raw(Kind::RankOutput, {{"rank", "2"}, {"lines", kEvil}, {"dropped", "-1"}})},
      {"output, no rank", raw(Kind::RankOutput, {{"lines", kEvil}})},
      {"output, long", raw(Kind::RankOutput, {{"rank", "2"}, {"lines", std::string(60 * 1024, 'o')}})},
      {"restart", raw(Kind::Restart, {{"reason", kEvil}})},
      {"stop, bad exit code", raw(Kind::Stop, {{"reason", kEvil}, {"exit_code", "x"}})},
      {"job end, no exit code", raw(Kind::JobEnd, {})},
      {"job end, exit code beyond 2^30", raw(Kind::JobEnd, {{"exit_code", "1073741825"}})},
      {"resume", raw(Kind::Resume, {{"junk", kEvil}})},
      {"verdict", raw(Kind::ProbeVerdict, {{"ifname", kEvil}})},
      {"standby, run not a nonce", raw(Kind::Standby, {{"reason", kEvil}, {"run", kEvil}})},
      {"filter, not a list", raw(Kind::OutputFilter, {{"ranks", "1,x"}})},
      {"filter, rank far beyond any job", raw(Kind::OutputFilter, {{"ranks", "99999999"}})},
      {"filter, none listed", raw(Kind::OutputFilter, {})},
      {"follow, an hour", raw(Kind::FollowRank, {{"rank", "1"}, {"seconds", "3600"}})},
      {"follow, over an hour", raw(Kind::FollowRank, {{"rank", "1"}, {"seconds", "3601"}})},
      {"follow, no rank", raw(Kind::FollowRank, {{"seconds", "3"}})},
      {"collect, no request", raw(Kind::CollectStacks, {{"request", "x"}})},
      {"stacks", raw(Kind::RankStacks, {{"request", "1"}, {"host", kEvil}, {"count", "2"}, {"rank.0", "0"},
                                        {"pid.0", "x"}, {"source.0", kEvil + "long source"}, {"text.0", long_stack},
                                        {"rank.1", "1"}})},
      {"stacks, count over the bound", raw(Kind::RankStacks, {{"request", "1"}, {"count", "1025"}})},
      {"stacks, negative count", raw(Kind::RankStacks, {{"request", "1"}, {"count", "-1"}})},
      {"stacks, a rank missing", raw(Kind::RankStacks, {{"request", "1"}, {"count", "1"}})},
      {"stacks, no request", raw(Kind::RankStacks, {{"count", "0"}})},
      {"stopped", raw(Kind::DebugStopped, {{"rank", "1"}, {"local_rank", "x"}, {"host", kEvil}, {"file", kEvil},
                                           {"function", kEvil}, {"code", kEvil}, {"reason", kEvil}, {"line", "7"}})},
      {"stopped, nothing but a rank", raw(Kind::DebugStopped, {{"rank", "1"}})},
      {"stopped, no rank", raw(Kind::DebugStopped, {{"host", "h"}})},
      {"output of a debugger", raw(Kind::DebugOutput, {{"rank", "1"}, {"lines", kEvil}, {"prompt", "1"}})},
      {"a prompt", raw(Kind::DebugOutput, {{"rank", "1"}, {"lines", kEvil}, {"asks", "line"}})},
      {"a secret prompt", raw(Kind::DebugOutput, {{"rank", "1"}, {"lines", kEvil}, {"asks", "secret"}})},
      {"a prompt of another kind", raw(Kind::DebugOutput, {{"rank", "1"}, {"lines", "x"}, {"asks", "other"}})},
      {"debug output, no rank", raw(Kind::DebugOutput, {{"lines", "x"}})},
      {"resumed, negative rank", raw(Kind::DebugResumed, {{"rank", "-4"}})},
      {"input, as typed", raw(Kind::DebugInput, {{"rank", "1"}, {"line", "p x\x1b"}})},
      {"input, two lines", raw(Kind::DebugInput, {{"rank", "1"}, {"line", "p x\nimport os"}})},
      {"attach, no rank", raw(Kind::DebugAttachGdb, {{"rank", "x"}})},
      {"attach", raw(Kind::DebugAttachGdb, {{"rank", "2"}})},
  };
}

// What each hostile message decodes to, encoded again ("refused" when its decoder refuses it).
const std::map<std::string, std::string>& expected_after_decoding() {
  static const std::map<std::string, std::string> expected = {
      {"failure, every text hostile",
       "worker_failed generation 6\n"
       "report={\"detail\":\"a\\x5c\\x5cx1b[2Jb\\x5c\\x5cr\\x5cnc\\x5c\\x5cx07d\",\"global_rank\":5,\"host\":\"a\\x5c\\x5cx1b[2Jb\\x5c\\x5cr\\x5c\\x5cnc\\x5c\\x5cx07d\",\"init_signature\":\"a\\x5c\\x5cx1b[2Jb\\x5c\\x5cr\\x5c\\x5cnc\\x5c\\x5cx07d\",\"kind\":\"init_failed\",\"local_rank\":1,\"log_file\":\"a\\x5c\\x5cx1b[2Jb\\x5c\\x5cr\\x5c\\x5cnc\\x5c\\x5cx07d\",\"node_rank\":1,\"phase\":\"init\",\"pid\":4321,\"status\":{\"code\":3,\"core_dumped\":false,\"signal\":0,\"signaled\":false},\"tail\":[\"a\\x5c\\x5cx1b[2Jb\\x5c\\x5cr\",\"c\\x5c\\x5cx07d\",\"{501*z}\\xe2\\x80\\xa6(98 bytes cut)\\xe2\\x80\\xa6{501*z}\"]}\n"},
      {"failure, not a report",
       "refused"},
      {"failure, no report",
       "refused"},
      {"finished",
       "node_finished generation 6\n"
       "exit_code=1\n"
       "summary=a\\x5cx1b[2Jb\\x5cr\\x0ac\\x5cx07d\n"},
      {"problem, no exit code",
       "node_problem generation 6\n"
       "exit_code=1\n"
       "message=a\\x5cx1b[2Jb\\x5cr\\x0a    c\\x5cx07d\n"},
      {"problem, nothing",
       "node_problem generation 6\n"
       "exit_code=1\n"
       "message=unspecified problem\n"},
      {"report",
       "node_report generation 6\n"
       "nic=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"
       "ok=0\n"
       "problems=a\\x5cx1b[2Jb\\x5cr\\x0ac\\x5cx07d\n"},
      {"report, no nic",
       "node_report generation 6\n"
       "nic=-\n"
       "ok=1\n"
       "problems=\n"},
      {"rank states",
       "rank_states generation 6\n"
       "host=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"
       "log_dir=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"
       "ranks=2 77 running 1 x 1 2 3 s\\x5cx1b[2J\\x0a4 5 init 0 - 0 0 -1 -\\x0a\n"
       "signals=\n"},
      {"rank states, no host",
       "rank_states generation 6\n"
       "host=?\n"
       "log_dir=\n"
       "ranks=\n"
       "signals=\n"},
      {"rank states, bad phase",
       "refused"},
      {"rank states, negative steps",
       "refused"},
      {"probe results",
       "probe_results generation 6\n"
       "links=0\\x091\\x09eth0\\x091.2.3.4\\x095.6.7.8:9\\x091\\x090.500000\\x0910.000000\\x09boom\\x1b[2J\\x0a1\\x090\\x09eth1\\x09a\\x09b\\x090\\x091.000000\\x092.000000\\x09\\x0a\n"},
      {"probe results, long ifname",
       "refused"},
      {"probe results, not a number",
       "refused"},
      {"timeline",
       "timeline_events generation 6\n"
       "events=1500\\x092\\x093\\x09i\\x09a\\x5cx1b[2Jb  c\\x5cx07d\\x09a\\x5cx1b[2Jb  c\\x5cx07d\\x09a\\x5cx1b[2Jb  c\\x5cx07d\\x0a\n"
       "sent_at_us=12\n"},
      {"timeline, no clock",
       "refused"},
      {"timeline, no events",
       "timeline_events generation 6\n"
       "events=\n"
       "sent_at_us=12\n"},
      {"output",
       "rank_output generation 6\n"
       "dropped=3\n"
       "lines=a\\x5cx1b[2Jb\\x5cr\\x0ac\\x5cx07d\n"
       "rank=2\n"},
      {"output, negative drops",
       "refused"},
      {"output, no rank",
       "refused"},
      {"output, long",
       "rank_output generation 6\n"
       "dropped=0\n"
       "lines={24564*o}\\xe2\\x80\\xa6(12311 bytes cut)\\xe2\\x80\\xa6{24565*o}\n"
       "rank=2\n"},
      {"restart",
       "restart generation 6\n"
       "reason=a\\x5cx1b[2Jb\\x5cr\\x0a    c\\x5cx07d\n"},
      {"stop, bad exit code",
       "stop generation 6\n"
       "exit_code=1\n"
       "reason=a\\x5cx1b[2Jb\\x5cr\\x0a    c\\x5cx07d\n"},
      {"job end, no exit code",
       "job_end generation 6\n"
       "exit_code=1\n"},
      {"job end, exit code beyond 2^30",
       "job_end generation 6\n"
       "exit_code=1\n"},
      {"resume",
       "resume generation 6\n"},
      {"verdict",
       "probe_verdict generation 6\n"
       "ifname=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"},
      {"standby, run not a nonce",
       "standby generation 6\n"
       "reason=a\\x5cx1b[2Jb\\x5cr\\x0a    c\\x5cx07d\n"
       "run=\n"},
      {"filter, not a list",
       "refused"},
      {"filter, rank far beyond any job",
       "refused"},
      {"filter, none listed",
       "output_filter generation 6\n"
       "ranks=\n"},
      {"follow, an hour",
       "follow_rank generation 6\n"
       "rank=1\n"
       "seconds=3600\n"},
      {"follow, over an hour",
       "refused"},
      {"follow, no rank",
       "refused"},
      {"collect, no request",
       "refused"},
      {"stacks",
       "rank_stacks generation 6\n"
       "count=2\n"
       "host=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"
       "pid.0=0\n"
       "pid.1=0\n"
       "rank.0=0\n"
       "rank.1=1\n"
       "request=1\n"
       "source.0=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx\n"
       "source.1=?\n"
       "text.0=a\\x5cx1b[2Jb\\x5cr\\x0ac\\x5cx07d{8162*s}\\xe2\\x80\\xa6(4137 bytes cut)\\xe2\\x80\\xa6{8181*s}\n"
       "text.1=\n"},
      {"stacks, count over the bound",
       "refused"},
      {"stacks, negative count",
       "refused"},
      {"stacks, a rank missing",
       "refused"},
      {"stacks, no request",
       "refused"},
      {"stopped",
       "debug_stopped generation 6\n"
       "code=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"
       "file=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"
       "function=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"
       "host=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"
       "line=7\n"
       "local_rank=-1\n"
       "pid=0\n"
       "rank=1\n"
       "reason=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"},
      {"stopped, nothing but a rank",
       "debug_stopped generation 6\n"
       "code=\n"
       "file=?\n"
       "function=?\n"
       "host=?\n"
       "line=0\n"
       "local_rank=-1\n"
       "pid=0\n"
       "rank=1\n"
       "reason=\n"},
      {"stopped, no rank",
       "refused"},
      {"output of a debugger",
       "debug_output generation 6\n"
       "asks=\n"
       "lines=a\\x5cx1b[2Jb\\x5cr\\x0ac\\x5cx07d\\x0a\n"
       "prompt=1\n"
       "rank=1\n"},
      {"a prompt",
       "debug_output generation 6\n"
       "asks=line\n"
       "lines=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"
       "prompt=0\n"
       "rank=1\n"},
      {"a secret prompt",
       "debug_output generation 6\n"
       "asks=secret\n"
       "lines=a\\x5cx1b[2Jb\\x5cr\\x5cnc\\x5cx07d\n"
       "prompt=0\n"
       "rank=1\n"},
      {"a prompt of another kind",
       "debug_output generation 6\n"
       "asks=\n"
       "lines=x\\x0a\n"
       "prompt=0\n"
       "rank=1\n"},
      {"debug output, no rank",
       "refused"},
      {"resumed, negative rank",
       "refused"},
      {"input, as typed",
       "debug_input generation 6\n"
       "line=p x\\x1b\n"
       "rank=1\n"},
      {"input, two lines",
       "refused"},
      {"attach, no rank",
       "refused"},
      {"attach",
       "debug_attach_gdb generation 6\n"
       "rank=2\n"},
  };
  return expected;
}

std::string decoded_again(const rendezvous::Message& m) {
  for (const auto& sample : message_samples::all()) {
    if (messages::kind_of(m) != sample.kind) continue;
    const auto back = sample.back(m);
    return back ? shown(*back) : "refused";
  }
  return "no such kind";
}

TEST(WireFormat, AHostilePeersMessagesAreRefusedOrMadePrintableAndBoundedAsBefore) {
  for (const auto& hostile : hostile_messages()) {
    const std::string got = decoded_again(hostile.sent);
    const auto expected = expected_after_decoding().find(hostile.label);
    ASSERT_NE(expected, expected_after_decoding().end()) << hostile.label;
    EXPECT_EQ(got, expected->second) << hostile.label;
  }
}

}  // namespace
}  // namespace ddplaunch
