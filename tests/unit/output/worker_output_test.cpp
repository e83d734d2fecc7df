// Worker output: '\r' progress segments (tqdm) shown promptly and throttled, "\r\n" as an
// ordinary line end, the progress mark dropped on display and in log files, and the failure
// tail keeping only the latest progress segment of a run; the line prefixes, the routing of
// the streams and the rotation of the log files.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "output/line_splitter.h"
#include "output/stream_routing.h"
#include "output/terminal_writer.h"
#include "output/worker_output.h"
#include "supervise/worker.h"
#include "worker_test_access.h"

using namespace ddplaunch;
using namespace std::chrono_literals;

namespace {

// A splitter on a hand-driven clock.
struct Splitter {
  std::chrono::steady_clock::time_point now{};
  LineSplitter splitter{64 * 1024, 200ms, [this] { return now; }};
  std::vector<std::string> lines;
  void feed(std::string_view chunk) {
    splitter.feed(chunk, [&](std::string_view l) { lines.emplace_back(l); });
  }
  void finish() {
    splitter.finish([&](std::string_view l) { lines.emplace_back(l); });
  }
};

TEST(OutputProgress, CarriageReturnSegmentIsShownAtOnceWithItsMark) {
  Splitter s;
  s.feed("\r 10%|#         |");
  EXPECT_EQ(s.lines, (std::vector<std::string>{" 10%|#         |\r"}));
  s.now += 1s;
  s.feed("\r 20%|##        |");
  EXPECT_EQ(s.lines.back(), " 20%|##        |\r");
  // The bar's last write, then tqdm's closing newline: the final state is not printed twice.
  s.now += 1s;
  s.feed("\r100%|##########|");
  s.feed("\n");
  s.feed("done\n");
  EXPECT_EQ(s.lines, (std::vector<std::string>{" 10%|#         |\r", " 20%|##        |\r",
                                               "100%|##########|\r", "done"}));
}

TEST(OutputProgress, ManyRedrawsAreThrottledAndTheLatestWins) {
  Splitter s;
  std::string burst;
  for (int i = 1; i <= 5000; ++i) burst += "\rstep " + std::to_string(i);
  s.feed(burst);  // one chunk: only its latest state
  EXPECT_EQ(s.lines, (std::vector<std::string>{"step 5000\r"}));
  for (int i = 5001; i <= 5100; ++i) {
    s.now += 1ms;
    s.feed("\rstep " + std::to_string(i));
  }
  EXPECT_EQ(s.lines.size(), 1u) << "shown again before the 200 ms interval passed";
  s.now += 200ms;
  s.feed("\rstep 5101");
  EXPECT_EQ(s.lines.back(), "step 5101\r");
  s.finish();
  EXPECT_EQ(s.lines.size(), 2u) << "finish repeated a shown segment";
}

TEST(OutputProgress, ThrottledFinalStateIsEmittedAtEof) {
  Splitter s;
  s.feed("\ra");
  s.feed("\rb\r");  // within the interval: held back
  EXPECT_EQ(s.lines, (std::vector<std::string>{"a\r"}));
  s.finish();
  EXPECT_EQ(s.lines, (std::vector<std::string>{"a\r", "b\r"}));
}

TEST(OutputProgress, CrLfIsAnOrdinaryLineEndEvenAcrossChunks) {
  Splitter s;
  s.feed("one\r\ntwo\r");
  s.feed("\nthree\n");
  s.finish();
  // "two\r" was shown at the chunk end (it might have been progress) and not printed again.
  EXPECT_EQ(s.lines, (std::vector<std::string>{"one", "two\r", "three"}));
  std::vector<std::string> plain;
  LineSplitter p;
  p.feed("a\r\nb\r\n", [&](std::string_view l) { plain.emplace_back(l); });
  EXPECT_EQ(plain, (std::vector<std::string>{"a", "b"}));
}

TEST(OutputProgress, LineEndingARunOfProgressIsItsFinalState) {
  Splitter s;
  s.feed("\rstep 1");
  s.feed("\rstep 2\rstep 3\n");  // throttled, then ended by '\n'
  s.feed("next\n");
  EXPECT_EQ(s.lines, (std::vector<std::string>{"step 1\r", "step 3\r", "next"}));
}

TEST(OutputProgress, OrdinaryPartialLineStillWaitsForItsNewline) {
  Splitter s;
  s.feed("no newline yet");
  EXPECT_TRUE(s.lines.empty());
  s.feed(" ... now\n");
  EXPECT_EQ(s.lines, (std::vector<std::string>{"no newline yet ... now"}));
}

TEST(OutputProgress, MarkIsDroppedOnDisplayAndInTheLogFile) {
  EXPECT_TRUE(is_progress_segment("50%\r"));
  EXPECT_FALSE(is_progress_segment("50%"));
  EXPECT_EQ(without_progress_mark("50%\r"), "50%");
  const auto dir = std::filesystem::temp_directory_path() / ("ddpl-output-" + std::to_string(::getpid()));
  RankLogFile log;
  ASSERT_EQ(log.open(dir.string(), 0, Generation{0}, 0, "host"), "");
  log.write_line(OutputStream::Stdout, "50%\r");
  std::ifstream in(log.path());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\n50%\n"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find('\r'), std::string::npos);
  std::filesystem::remove_all(dir);

  // The terminal line, through a pipe in place of stdout.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  int saved = ::dup(STDOUT_FILENO);
  ::dup2(fds[1], STDOUT_FILENO);
  write_prefixed_line(OutputStream::Stdout, "[rank 0]", "50%\r");
  terminal_flush();  // written by the terminal queue's thread
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(fds[1]);
  char buf[64] = {};
  ssize_t n = ::read(fds[0], buf, sizeof buf - 1);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0), "[rank 0] 50%\n");
}

TEST(OutputProgress, FailureTailKeepsOnlyTheLatestProgressSegment) {
  boost::asio::io_context io;
  Worker w(io, 0, 0);
  WorkerTestAccess::remember(w, "starting");
  for (int i = 1; i <= 5000; ++i) WorkerTestAccess::remember(w, "step " + std::to_string(i) + "\r");
  WorkerTestAccess::remember(w, "Traceback (most recent call last):");
  WorkerTestAccess::remember(w, "next\r");
  EXPECT_EQ(w.output.tail(), (std::deque<std::string>{"starting", "step 5000", "Traceback (most recent call last):",
                                             "next"}));
}

}  // namespace

namespace ddplaunch {
TEST(OutputPrefix, TorchrunLinePrefixTemplateIsHonoured) {
  EXPECT_EQ(prefix_from_template("[${role_name}${rank}|${local_rank}]:", "trainer", 5, 1), "[trainer5|1]:");
  EXPECT_EQ(prefix_from_template("${rank}${unknown}$", "r", 0, 0), "0${unknown}$");
  EXPECT_EQ(worker_prefix(1, 2, 3), "[node 1 rank 3]");
}
}  // namespace ddplaunch

TEST(WorkerOutput, PrefixNamesNodeOnlyOnMultiNodeJobs) {
  EXPECT_EQ(worker_prefix(0, 1, 3), "[rank 3]");
  EXPECT_EQ(worker_prefix(2, 4, 9), "[node 2 rank 9]");
}

// torchrun's -r/-t: which streams of which local rank go to the terminal and the log file.
namespace {
StreamSpec spec(std::string_view text) {
  auto parsed = parse_stream_spec(text);
  EXPECT_TRUE(parsed.has_value()) << text;
  return parsed.value_or(StreamSpec{});
}
}  // namespace

TEST(OutputRouting, DefaultShowsBothStreamsAndFilesThemWithALogDir) {
  StreamRouting plain = route_streams(spec(""), spec(""), false, 0, true);
  EXPECT_TRUE(plain.stdout_to_terminal && plain.stderr_to_terminal);
  EXPECT_FALSE(plain.any_file());
  StreamRouting logged = route_streams(spec(""), spec(""), true, 0, true);
  EXPECT_TRUE(logged.stdout_to_file && logged.stderr_to_file && logged.stdout_to_terminal);
  StreamRouting filtered = route_streams(spec(""), spec(""), true, 1, false);  // --local-ranks-filter left it out
  EXPECT_FALSE(filtered.stdout_to_terminal || filtered.stderr_to_terminal);
  EXPECT_TRUE(filtered.stdout_to_file && filtered.stderr_to_file);
}

TEST(OutputRouting, RedirectsAndTeeFollowTorchrun) {
  StreamRouting r = route_streams(spec("3"), spec(""), true, 0, true);  // -r 3: files only
  EXPECT_FALSE(r.stdout_to_terminal || r.stderr_to_terminal);
  EXPECT_TRUE(r.stdout_to_file && r.stderr_to_file);
  StreamRouting t = route_streams(spec(""), spec("1"), true, 0, true);  // -t 1: stdout to both, stderr terminal only
  EXPECT_TRUE(t.stdout_to_terminal && t.stdout_to_file && t.stderr_to_terminal);
  EXPECT_FALSE(t.stderr_to_file);
  StreamRouting both = route_streams(spec("1"), spec("1"), true, 0, true);  // redirected and teed: still shown
  EXPECT_TRUE(both.stdout_to_terminal && both.stdout_to_file);
  // Per-rank lists: a rank left out gets neither.
  EXPECT_TRUE(route_streams(spec(""), spec("0:2,1:1"), true, 0, true).stderr_to_file);
  EXPECT_FALSE(route_streams(spec(""), spec("0:2,1:1"), true, 0, true).stdout_to_file);
  EXPECT_TRUE(route_streams(spec(""), spec("0:2,1:1"), true, 1, true).stdout_to_file);
  EXPECT_FALSE(route_streams(spec(""), spec("0:2,1:1"), true, 2, true).any_file());
  EXPECT_TRUE(route_streams(spec("0:3"), spec(""), true, 2, true).stdout_to_terminal);
}

TEST(OutputRouting, SpecsAreCheckedAndTellWhetherFilesAreNeeded) {
  EXPECT_EQ(stream_spec_problem(""), "");
  EXPECT_EQ(stream_spec_problem("3"), "");
  EXPECT_EQ(stream_spec_problem("0:1,3:2"), "");
  EXPECT_NE(stream_spec_problem("4").find("0..3"), std::string::npos);
  EXPECT_NE(stream_spec_problem("0:7").find("0..3"), std::string::npos);
  EXPECT_NE(stream_spec_problem("x:1").find("LOCAL_RANK:0..3"), std::string::npos);
  EXPECT_NE(stream_spec_problem("0:1,").find("0..3"), std::string::npos);
  EXPECT_EQ(spec("0:1,3:2").streams_for(3), 2);
  EXPECT_TRUE(streams_need_files(spec("3"), spec("")));
  EXPECT_TRUE(streams_need_files(spec(""), spec("0:0,1:1")));
  EXPECT_FALSE(streams_need_files(spec("0"), spec("0:0")));
  EXPECT_FALSE(streams_need_files(spec(""), spec("")));
}

TEST(OutputRouting, ASpecIsParsedOnceAndReadsBackAsGiven) {
  EXPECT_FALSE(spec("").given());
  EXPECT_TRUE(spec("0").given()) << "-r 0 is given: torchrun's meaning, not ddplaunch's default";
  EXPECT_EQ(spec("2").every_rank, 2);
  EXPECT_EQ(spec("0:1,3:2").per_rank, (std::vector<std::pair<int, int>>{{0, 1}, {3, 2}}));
  EXPECT_EQ(spec("0:1,0:2").streams_for(0), 2) << "the last mention of a rank wins";
  EXPECT_EQ(spec("0:1,3:2").streams_for(1), 0) << "an unlisted rank gets no stream";
  for (const char* text : {"", "0", "3", "0:1,3:2"}) EXPECT_EQ(stream_spec_text(spec(text)), text);
  for (const char* text : {"4", "-1", "0:", ":1", "0:1,", "0:1;1:2", " 1"})
    EXPECT_FALSE(parse_stream_spec(text).has_value()) << text;
}

TEST(OutputLogRotation, AnEarlierGenerationMovesToItsOwnFile) {
  EXPECT_EQ(rotated_log_name(3, "===== ddplaunch generation 2 | rank 3 | node 0 (h) | started x ====="),
            "rank_3.gen2.log");
  EXPECT_EQ(rotated_log_name(3, "something else"), "rank_3.previous.log");
  EXPECT_EQ(rotated_log_name(3, "===== ddplaunch generation x |"), "rank_3.previous.log");

  const std::string dir = (std::filesystem::temp_directory_path() / ("ddpl-rotate-" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(dir);
  {
    RankLogFile gen0;
    ASSERT_EQ(gen0.open(dir, 1, Generation{0}, 0, "host"), "");
    gen0.write_line(OutputStream::Stdout, "from generation 0");
  }
  {
    RankLogFile gen1;
    ASSERT_EQ(gen1.open(dir, 1, Generation{1}, 0, "host"), "");
    gen1.write_line(OutputStream::Stderr, "from generation 1");
  }
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string current = read(dir + "/rank_1.log"), earlier = read(dir + "/rank_1.gen0.log");
  std::filesystem::remove_all(dir);
  EXPECT_NE(current.find("===== ddplaunch generation 1 | rank 1"), std::string::npos) << current;
  EXPECT_NE(current.find("[err] from generation 1"), std::string::npos) << current;
  EXPECT_EQ(current.find("generation 0"), std::string::npos) << current;
  EXPECT_NE(earlier.find("===== ddplaunch generation 0 | rank 1"), std::string::npos) << earlier;
  EXPECT_NE(earlier.find("from generation 0"), std::string::npos) << earlier;
}
