// A worker's output through the router, with pipes standing in for the worker: the filters
// decide the terminal, a followed rank's lines reach `ddplaunch tail`, every line reaches the
// worker's tail, and a reaped worker whose pipes end is finished once.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "worker_test_access.h"
#include "supervise/rank_prompt_watch.h"
#include "supervise/worker_output_router.h"

using namespace ddplaunch;
using namespace std::chrono_literals;

namespace {

class Routed {
 public:
  Routed() {
    callbacks_.on_followed_line = [this](int rank, std::string_view line) {
      followed.push_back(std::to_string(rank) + ": " + std::string(line));
    };
    GroupSpec spec;
    spec.assignment.local_world_size = 1;
    router.start(spec);
  }

  // The worker's pipes, read by the router: what the test writes comes out of them; returns
  // the write ends.
  std::pair<int, int> read_pipes() {
    int out[2], err[2];
    EXPECT_EQ(::pipe(out), 0);
    EXPECT_EQ(::pipe(err), 0);
    router.read(worker, out[0], err[0]);
    return {out[1], err[1]};
  }

  boost::asio::io_context io;
  std::shared_ptr<Worker> worker = std::make_shared<Worker>(io, 0, 4);
  std::vector<std::string> followed;
  int finished = 0;

 private:
  GroupCallbacks callbacks_;
  NodeAssignment assignment_;
  DebuggerWatch debuggers_{callbacks_};
  RankPromptWatch prompts_{callbacks_, debuggers_};

 public:
  WorkerOutputRouter router{io, callbacks_, assignment_, debuggers_, prompts_, [this](Worker&) { ++finished; }};
};

}  // namespace

TEST(WorkerOutputRouter, RanksFilterDecidesTheTerminal) {
  Routed r;
  r.router.route(*r.worker, {});
  EXPECT_TRUE(r.worker->output.routing().stdout_to_terminal);
  r.router.route(*r.worker, {0, 1});  // the console's `:ranks 0,1`: rank 4 is hidden
  EXPECT_FALSE(r.worker->output.routing().stdout_to_terminal);
  EXPECT_FALSE(r.worker->output.routing().stderr_to_terminal);
}

TEST(WorkerOutputRouter, LinesReachFollowersAndTheTailAndTheEndFinishesAReapedWorker) {
  Routed r;
  r.router.route(*r.worker, {0});  // off the terminal: the test's output stays clean
  r.router.follow_ranks({4});
  auto [out, err] = r.read_pipes();
  ASSERT_EQ(::write(out, "step 1\nstep 2\n", 14), 14);
  ASSERT_EQ(::write(err, "warning\nlast", 12), 12);
  r.io.run_for(100ms);
  EXPECT_EQ(r.followed, (std::vector<std::string>{"4: step 1", "4: step 2", "4: warning"}));
  WorkerTestAccess::set_status(*r.worker, ExitStatus{false, 1, 0, false});  // reaped while its pipes are open
  ::close(out);
  ::close(err);
  r.io.run_for(100ms);
  EXPECT_EQ(r.finished, 1);
  EXPECT_EQ(r.worker->output.open_pipes(), 0);
  ASSERT_FALSE(r.worker->output.tail().empty());
  EXPECT_EQ(r.worker->output.tail().back(), "last") << "the unterminated last line counts at the end";
}

TEST(WorkerOutputRouter, ClosedPipesOfAReapedWorkerGiveUpTheirLastLine) {
  Routed r;
  r.router.route(*r.worker, {0});
  auto [out, err] = r.read_pipes();
  ASSERT_EQ(::write(out, "partial", 7), 7);
  r.io.run_for(100ms);
  r.router.close_pipes(*r.worker);  // a descendant holds them open past the drain bound
  r.io.run_for(50ms);
  EXPECT_EQ(r.worker->output.open_pipes(), 0);
  EXPECT_EQ(r.worker->output.tail().back(), "partial");
  EXPECT_EQ(r.finished, 0) << "the supervisor finishes it after closing";
  ::close(out);
  ::close(err);
}
