// A worker's debugger between its pipes and the console, with a pipe standing in for the
// worker's stdin: the first prompt is a stop at the location pdb printed, typed lines reach
// the pipe, and a resuming line ends the debugging state.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "worker_test_access.h"
#include "supervise/debugger_watch.h"

using namespace ddplaunch;
using namespace std::chrono_literals;

namespace {

class Watched {
 public:
  Watched() {
    callbacks_.on_debugger_stopped = [this](const Worker&, const debug::StopLocation& where, const std::string& reason) {
      stopped_at = where;
      stop_reason = reason;
      ++stops;
    };
    callbacks_.on_debugger_output = [this](const Worker&, const std::string& lines, bool) { output += lines; };
    callbacks_.on_debugger_left = [this](const Worker&) { ++left; };
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    keyboard_ = fds[0];
    watch.connect_keyboard(*worker, fds[1]);
  }
  ~Watched() { ::close(keyboard_); }

  // The worker wrote `text` on stdout: its whole lines are remembered, then the watch looks.
  void worker_wrote(std::string_view text) {
    const bool prompted = WorkerTestAccess::wrote_on_stdout(*worker, text, [this](std::string_view line) {
      watch.take_output_line(*worker, line);
      WorkerTestAccess::remember(*worker, line);
    });
    watch.notice_prompt(*worker, prompted);
  }
  std::string typed() {  // what reached the worker's stdin
    io.run_for(50ms);
    char buffer[256];
    const ssize_t n = ::read(keyboard_, buffer, sizeof buffer);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
  }

  boost::asio::io_context io;
  std::shared_ptr<Worker> worker = std::make_shared<Worker>(io, 1, 9);
  debug::StopLocation stopped_at;
  std::string stop_reason, output;
  int stops = 0, left = 0;

 private:
  GroupCallbacks callbacks_;
  int keyboard_ = -1;

 public:
  DebuggerWatch watch{callbacks_};
};

}  // namespace

// A post-mortem stop names the exception even when the traceback (on stderr, written just
// before the shim's mark on stdout) was read after the mark and lies between it and pdb's place.
TEST(DebuggerWatch, APostMortemStopNamesItsExceptionWithTheTracebackReadAfterTheMark) {
  Watched w;
  w.worker_wrote("ddplaunch post-mortem: raised ValueError\n");
  for (int i = 0; i < 8; ++i) WorkerTestAccess::remember(*w.worker, "  File \"train.py\", line 19, in load_batch");
  WorkerTestAccess::remember(*w.worker, "ValueError: bad batch at step 6");
  w.worker_wrote("> /home/u/train.py(19)load_batch()\n-> raise ValueError(step)\n(Pdb) ");
  EXPECT_EQ(w.stops, 1);
  EXPECT_EQ(w.stop_reason, "raised ValueError");
  EXPECT_EQ(w.stopped_at.line, 19);
}

TEST(DebuggerWatch, FirstPromptIsAStopAtThePlacePdbPrinted) {
  Watched w;
  w.worker_wrote("> /home/u/train.py(88)load_batch()\n-> x = batch[0]\n(Pdb) ");
  EXPECT_EQ(w.stops, 1);
  EXPECT_TRUE(w.worker->debugger.debugging());
  EXPECT_EQ(w.stopped_at.file, "/home/u/train.py");
  EXPECT_EQ(w.stopped_at.line, 88);
  EXPECT_EQ(w.stopped_at.function, "load_batch");
  EXPECT_EQ(w.stopped_at.code, "x = batch[0]");
  EXPECT_EQ(w.stop_reason, "");
}

TEST(DebuggerWatch, LinesReachTheWorkersStdinAndAResumeEndsTheDebugging) {
  Watched w;
  EXPECT_FALSE(w.watch.input(w.worker, "p x")) << "not in its debugger yet";
  w.worker_wrote("> /home/u/train.py(88)load_batch()\n(Pdb) ");
  ASSERT_TRUE(w.watch.input(w.worker, "p x"));
  EXPECT_EQ(w.typed(), "p x\n");
  w.worker_wrote("3\n(Pdb) ");
  EXPECT_EQ(w.output, "3\n");
  ASSERT_TRUE(w.watch.input(w.worker, "c"));
  EXPECT_EQ(w.typed(), "c\n");
  EXPECT_FALSE(w.worker->debugger.debugging());
  EXPECT_EQ(w.left, 1);
  EXPECT_FALSE(w.watch.input(w.worker, "p x")) << "it runs on";
}

TEST(DebuggerWatch, AFullKeyboardRefusesTheLine) {
  Watched w;
  w.worker_wrote("> /home/u/train.py(88)load_batch()\n(Pdb) ");
  WorkerTestAccess::set_stdin_writing(*w.worker, true);  // a write in flight: lines queue
  EXPECT_FALSE(w.watch.input(w.worker, std::string(Worker::kMaxStdinQueue, 'x')));
}

// A person types `c` before the prompt of their previous command came (its answer printed,
// the prompt in a later read): that prompt answers `p x` and is no new stop; the rank runs on,
// and a later breakpoint's prompt is a stop again.
TEST(DebuggerWatch, APromptOwedToACommandTypedBeforeContinueIsNoNewStop) {
  Watched w;
  w.worker_wrote("> /home/u/train.py(88)load_batch()\n(Pdb) ");
  ASSERT_EQ(w.stops, 1);
  ASSERT_TRUE(w.watch.input(w.worker, "p x"));
  w.worker_wrote("3\n");
  ASSERT_TRUE(w.watch.input(w.worker, "c"));
  EXPECT_EQ(w.typed(), "p x\nc\n");
  w.worker_wrote("(Pdb) ");  // the prompt that followed `p x`
  EXPECT_EQ(w.stops, 1);
  EXPECT_FALSE(w.worker->debugger.debugging()) << "the rank runs on";
  w.worker_wrote("> /home/u/train.py(95)step()\n(Pdb) ");  // its next breakpoint
  EXPECT_EQ(w.stops, 2);
  EXPECT_TRUE(w.worker->debugger.debugging());
}

// A person's gdb (`:attach R --gdb`, marked by DebuggerWatch at RankDebugSessions' request
// through the GroupSupervisor) holds the rank: "debugging" in the status table until it lets go.
TEST(DebuggerWatch, AGdbAttachedByAPersonShowsTheRankAsDebuggingUntilItLetsGo) {
  Watched w;
  EXPECT_EQ(w.worker->state_text(), "setup");
  w.watch.set_gdb_attached(*w.worker, true);
  EXPECT_TRUE(w.worker->debugger.gdb_attached());
  EXPECT_EQ(w.worker->state_text(), RankReport::kDebuggingState);
  w.watch.set_gdb_attached(*w.worker, false);
  EXPECT_EQ(w.worker->state_text(), "setup");
  EXPECT_EQ(w.stops, 0) << "gdb is no pdb stop: the console hears of it from RankDebugSessions";
}
