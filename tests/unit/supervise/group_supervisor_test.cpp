// The supervision core against real child processes (ninja's SubprocessSet tests in spirit):
// GroupSupervisor starts /bin/sh workers in a real Asio loop and must report each exit code
// and signal, classify the phase of a failure, sweep a setsid'd grandchild, stop workers that
// are still starting, and reap a storm of 64 simultaneous exits — one outcome per generation.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "supervise/descendant_sweep.h"
#include "supervise/group_supervisor.h"
#include "supervise/orphan_guard.h"
#include "supervise/own_tools.h"

using namespace ddplaunch;
using namespace std::chrono_literals;

namespace {

constexpr auto kBound = 20s;  // no loop in these tests waits longer

// One guard for the whole test program: it forks once, and tags every worker so that the
// sweep finds descendants that left their worker's process group.
OrphanGuard& shared_guard() {
  static OrphanGuard guard;
  static const std::string error = [] {
    become_subreaper();  // as the launcher: orphans of the workers come back to this process
    return guard.start();
  }();
  EXPECT_EQ(error, "");
  return guard;
}

struct Observed {
  std::vector<WorkerFailure> failures;
  std::vector<GroupOutcome> outcomes;
};

class Supervised {
 public:
  explicit Supervised(int workers, std::string script) : dir_(make_dir()) {
    spec_.program = {"/bin/sh", "-c", std::move(script)};
    spec_.assignment.local_world_size = workers;
    spec_.assignment.world_size = workers;
    spec_.assignment.job_id = "supervisor-test";
    spec_.base_env = {{"PATH", "/usr/bin:/bin"}, {"TEST_DIR", dir_}};
    // Output to per-rank files only: the test's own terminal stays readable.
    spec_.log_dir = dir_ + "/logs";
    spec_.redirects = StreamSpec{.every_rank = 3};
    GroupCallbacks callbacks;
    callbacks.on_failure = [this](const WorkerFailure& f) { seen_.failures.push_back(f); };
    callbacks.on_finished = [this](const GroupOutcome& o) { seen_.outcomes.push_back(o); };
    supervisor_.emplace(io_, shared_guard(), status_, std::move(callbacks));
  }
  ~Supervised() {
    supervisor_.reset();
    std::filesystem::remove_all(dir_);
  }

  GroupSupervisor& supervisor() { return *supervisor_; }
  const Observed& seen() const { return seen_; }
  const std::string& dir() const { return dir_; }
  void start(Generation generation = Generation{0}) {
    spec_.assignment.generation = generation;
    supervisor_->start(spec_);
  }

  // Runs the loop until the generation's outcome arrives (bounded), then a little longer, so
  // that a second outcome — a bug — would be seen too.
  bool run_until_outcome() {
    const auto limit = std::chrono::steady_clock::now() + kBound;
    while (seen_.outcomes.empty() && std::chrono::steady_clock::now() < limit) io_.run_one_for(100ms);
    io_.run_for(200ms);
    return !seen_.outcomes.empty();
  }
  void run_for(std::chrono::milliseconds d) { io_.run_for(d); }

  const WorkerFailure* failure_of(int rank) const {
    for (const auto& f : seen_.failures)
      if (f.global_rank == rank) return &f;
    return nullptr;
  }

 private:
  static std::string make_dir() {
    char pattern[] = "/tmp/supervisor-test-XXXXXX";
    const char* dir = mkdtemp(pattern);
    EXPECT_NE(dir, nullptr);
    return dir ? dir : "/tmp";
  }

  std::string dir_;
  boost::asio::io_context io_;
  StatusChannel status_{io_};  // never opened: the tests hand reports to the supervisor
  GroupSpec spec_;
  Observed seen_;
  std::optional<GroupSupervisor> supervisor_;
};

std::map<int, ExitStatus> statuses_by_rank(const GroupOutcome& outcome) {
  std::map<int, ExitStatus> by_rank;
  for (const auto& [rank, status] : outcome.statuses) by_rank[rank] = status;
  return by_rank;
}

// Alive and not a zombie (a zombie has been killed; only its parent's wait is missing).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close_paren = text.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < text.size() && text[close_paren + 2] != 'Z';
}

pid_t read_pid(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = -1;
  in >> pid;
  return pid;
}

}  // namespace

TEST(GroupSupervisor, ReportsEachRanksExitCodeAndSignalInOneOutcome) {
  Supervised s(3, "case $LOCAL_RANK in 1) exit 7;; 2) kill -KILL $$;; esac; exit 0");
  s.start();
  ASSERT_TRUE(s.run_until_outcome());
  ASSERT_EQ(s.seen().outcomes.size(), 1u);
  auto by_rank = statuses_by_rank(s.seen().outcomes[0]);
  ASSERT_EQ(by_rank.size(), 3u);
  EXPECT_TRUE(by_rank[0].success());
  EXPECT_EQ(by_rank[1].code, 7);
  EXPECT_FALSE(by_rank[1].signaled);
  EXPECT_TRUE(by_rank[2].signaled);
  EXPECT_EQ(by_rank[2].signal, SIGKILL);
  // The failures, each once; the successful rank is none.
  ASSERT_EQ(s.seen().failures.size(), 2u);
  EXPECT_EQ(s.failure_of(0), nullptr);
  ASSERT_NE(s.failure_of(1), nullptr);
  EXPECT_EQ(s.failure_of(1)->status->code, 7);
  ASSERT_NE(s.failure_of(2), nullptr);
  EXPECT_EQ(s.failure_of(2)->status->signal, SIGKILL);
}

TEST(GroupSupervisor, AnExitWithoutAnyShimReportIsASetupFailureWithItsLastLines) {
  Supervised s(1, "echo 'ModuleNotFoundError: No module named nonexistent' >&2; exit 1");
  s.start();
  ASSERT_TRUE(s.run_until_outcome());
  const WorkerFailure* f = s.failure_of(0);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->phase, FailurePhase::Setup);
  EXPECT_EQ(f->kind, FailureKind::Exited);
  EXPECT_NE(f->detail.find("before it called init_process_group"), std::string::npos) << f->detail;
  ASSERT_FALSE(f->tail.empty());
  EXPECT_EQ(f->tail.back(), "ModuleNotFoundError: No module named nonexistent");
  EXPECT_TRUE(f->init_signature.empty());
}

TEST(GroupSupervisor, AShimReportOfInitMakesTheExitAnInitFailure) {
  // The worker waits for the test's report (a file the test writes after reporting).
  Supervised s(1, "i=0; while [ ! -e \"$TEST_DIR/go\" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 3");
  s.start();
  contract::StatusMessage begin;
  begin.event = contract::StatusEvent::InitBegin;
  begin.rank = 0;
  begin.pid = s.supervisor().workers().at(0)->process.pid();  // as the status channel gives it: the kernel's
  s.supervisor().handle_status(begin);
  EXPECT_EQ(s.supervisor().workers().at(0)->phases.phase(), RankPhase::Init);
  std::ofstream(s.dir() + "/go").put('1');
  ASSERT_TRUE(s.run_until_outcome());
  const WorkerFailure* f = s.failure_of(0);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->phase, FailurePhase::Init);
  EXPECT_NE(f->detail.find("during process-group init"), std::string::npos) << f->detail;
}

TEST(GroupSupervisor, AReportOfAnEarlierGenerationIsIgnored) {
  Supervised s(1, "i=0; while [ ! -e \"$TEST_DIR/go\" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 3");
  s.start(Generation{1});
  contract::StatusMessage stale;
  stale.event = contract::StatusEvent::InitBegin;
  stale.rank = 0;
  stale.pid = s.supervisor().workers().at(0)->process.pid();
  stale.generation = 0;  // the generation before
  s.supervisor().handle_status(stale);
  EXPECT_EQ(s.supervisor().workers().at(0)->phases.phase(), RankPhase::Setup);
  std::ofstream(s.dir() + "/go").put('1');
  ASSERT_TRUE(s.run_until_outcome());
  ASSERT_NE(s.failure_of(0), nullptr);
  EXPECT_EQ(s.failure_of(0)->phase, FailurePhase::Setup);
}

// Any process of this user can write to the status socket. A report is
// believed only from the rank's worker or a process below it.
TEST(GroupSupervisor, AReportFromOutsideTheRanksProcessTreeIsIgnored) {
  Supervised s(2, "i=0; while [ ! -e \"$TEST_DIR/go\" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 3");
  s.start();
  contract::StatusMessage forged;
  forged.event = contract::StatusEvent::InitBegin;
  forged.rank = 0;
  forged.pid = ::getpid();  // the test itself: not rank 0's worker
  s.supervisor().handle_status(forged);
  forged.pid = s.supervisor().workers().at(1)->process.pid();  // another rank's worker
  s.supervisor().handle_status(forged);
  forged.pid = 0;  // no credentials
  s.supervisor().handle_status(forged);
  EXPECT_EQ(s.supervisor().workers().at(0)->phases.phase(), RankPhase::Setup);
  std::ofstream(s.dir() + "/go").put('1');
  ASSERT_TRUE(s.run_until_outcome());
  ASSERT_NE(s.failure_of(0), nullptr);
  EXPECT_EQ(s.failure_of(0)->phase, FailurePhase::Setup) << "a forged init report changed the diagnosis";
}

TEST(GroupSupervisor, AnNcclInitErrorInTheOutputMakesASetupExitAnInitFailure) {
  Supervised s(1, "echo 'NCCL error in: init.cc:1, unhandled system error' >&2; exit 1");
  s.start();
  ASSERT_TRUE(s.run_until_outcome());
  const WorkerFailure* f = s.failure_of(0);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->phase, FailurePhase::Init);
  EXPECT_FALSE(f->init_signature.empty());
}

TEST(GroupSupervisor, ASetsidGrandchildIsSweptWhenTheGenerationEnds) {
  // The worker leaves a grandchild in a session of its own (out of the worker's process
  // group, so killing the group misses it) and exits 0.
  // It writes its pid only once in its own session; the worker waits for that (bounded).
  Supervised s(1,
               "setsid sh -c 'echo $$ > \"$TEST_DIR/grandchild\"; exec sleep 300' </dev/null >/dev/null 2>&1 & "
               "i=0; while [ ! -s \"$TEST_DIR/grandchild\" ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i+1)); done; exit 0");
  s.start();
  ASSERT_TRUE(s.run_until_outcome());
  const pid_t grandchild = read_pid(s.dir() + "/grandchild");
  ASSERT_GT(grandchild, 0);
  // Bounded: the sweep has run before the outcome; let the loop reap the adopted zombie.
  for (int i = 0; i < 50 && running(grandchild); ++i) s.run_for(100ms);
  EXPECT_FALSE(running(grandchild)) << "pid " << grandchild << " survived its generation";
  EXPECT_TRUE(s.seen().failures.empty());
}

TEST(GroupSupervisor, StopWhileStartingKillsEveryWorkerAndReportsNoFailure) {
  Supervised s(4, "exec sleep 300");
  s.start();
  s.supervisor().stop(0ms);  // before the loop ran once: the workers are barely exec'ing
  ASSERT_TRUE(s.run_until_outcome());
  ASSERT_EQ(s.seen().outcomes.size(), 1u);
  for (const auto& [rank, status] : s.seen().outcomes[0].statuses) {
    EXPECT_TRUE(status.signaled) << "rank " << rank;
    EXPECT_EQ(status.signal, SIGKILL) << "rank " << rank;
  }
  EXPECT_TRUE(s.seen().failures.empty()) << "a stop ordered by the launcher is no worker failure";
  EXPECT_FALSE(s.supervisor().active());
}

TEST(GroupSupervisor, AWorkerIgnoringSigtermIsKilledAfterTheGrace) {
  Supervised s(2, "trap '' TERM; echo ready > \"$TEST_DIR/ready.$LOCAL_RANK\"; while :; do sleep 0.05; done");
  s.start();
  for (int i = 0; i < 100 && !(std::filesystem::exists(s.dir() + "/ready.0") &&
                               std::filesystem::exists(s.dir() + "/ready.1"));
       ++i)
    s.run_for(50ms);
  s.supervisor().stop(300ms);
  ASSERT_TRUE(s.run_until_outcome());
  for (const auto& [rank, status] : s.seen().outcomes[0].statuses) {
    EXPECT_TRUE(status.signaled) << "rank " << rank;
    EXPECT_EQ(status.signal, SIGKILL) << "rank " << rank << ": SIGTERM is ignored, only SIGKILL ends it";
  }
}

TEST(GroupSupervisor, ReapsAStormOf64SimultaneousExits) {
  constexpr int kWorkers = 64;
  Supervised s(kWorkers, "exit $((LOCAL_RANK % 3))");
  s.start();
  ASSERT_TRUE(s.run_until_outcome());
  ASSERT_EQ(s.seen().outcomes.size(), 1u);
  auto by_rank = statuses_by_rank(s.seen().outcomes[0]);
  ASSERT_EQ(by_rank.size(), static_cast<std::size_t>(kWorkers));
  int failing = 0;
  for (int rank = 0; rank < kWorkers; ++rank) {
    EXPECT_EQ(by_rank[rank].code, rank % 3) << "rank " << rank;
    if (rank % 3 != 0) ++failing;
  }
  EXPECT_EQ(static_cast<int>(s.seen().failures.size()), failing);
}

TEST(GroupSupervisor, ASecondGenerationStartsCleanAfterTheFirstOutcome) {
  Supervised s(2, "exit $DDPLAUNCH_GENERATION");
  s.start();
  ASSERT_TRUE(s.run_until_outcome());
  ASSERT_EQ(s.seen().outcomes.size(), 1u);
  // The same supervisor, generation 1 (as a group restart does): its outcome is its own.
  GroupSpec next;
  next.program = {"/bin/sh", "-c", "exit $DDPLAUNCH_GENERATION"};
  next.assignment.local_world_size = 2;
  next.assignment.world_size = 2;
  next.assignment.generation = Generation{1};
  next.base_env = {{"PATH", "/usr/bin:/bin"}};
  next.log_dir = s.dir() + "/logs";
  next.redirects = StreamSpec{.every_rank = 3};
  s.supervisor().start(next);
  const auto limit = std::chrono::steady_clock::now() + kBound;
  while (s.seen().outcomes.size() < 2 && std::chrono::steady_clock::now() < limit) s.run_for(100ms);
  ASSERT_EQ(s.seen().outcomes.size(), 2u);
  EXPECT_EQ(s.seen().outcomes[1].generation, Generation{1});
  for (const auto& [rank, status] : s.seen().outcomes[1].statuses) EXPECT_EQ(status.code, 1) << "rank " << rank;
  EXPECT_EQ(s.seen().failures.size(), 2u);  // generation 0 exited 0; both of generation 1 failed
}

// A tool the launcher runs for itself (eu-stack, gdb during a stack round) is its child too;
// the end-of-generation sweep kills every other descendant, never it.
TEST(GroupSupervisor, TheSweepLeavesTheLaunchersOwnToolsAlone) {
  const pid_t tool = own_tools::fork_tool();
  if (tool == 0) {
    ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(tool, 0);
  {
    Supervised s(1, "exit 0");
    s.start();
    ASSERT_TRUE(s.run_until_outcome());
    s.run_for(300ms);  // the delayed sweep has run too
  }
  EXPECT_TRUE(running(tool)) << "the sweep killed the launcher's own tool";
  ::kill(tool, SIGKILL);
  ::waitpid(tool, nullptr, 0);
  own_tools::forget(tool);
}
