// JobPolicy driven directly: each case is a short script of events and the decisions it
// must produce. No sockets, timers or processes.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "policy/job_policy.h"
#include "policy_decisions.h"
#include "policy/node_checks.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;
using Decisions = JobPolicy::Decisions;
using testing::count;
using testing::failure;
using testing::find;
using testing::logs;
using testing::rank;
const PolicyClock::time_point t0{};

rendezvous::NodeRecord node(int rank, int nproc = 2, std::string address = "127.0.0.1") {
  rendezvous::NodeRecord n;
  n.node_rank = rank;
  n.facts.nproc = nproc;
  n.facts.hostname = "host" + std::to_string(rank);
  n.observed_address = std::move(address);
  return n;
}

std::vector<rendezvous::NodeRecord> nodes(int count, int nproc = 2) {
  std::vector<rendezvous::NodeRecord> out;
  for (int i = 0; i < count; ++i) out.push_back(node(i, nproc));
  return out;
}

PolicySettings settings() {
  PolicySettings s;
  s.restart.init_restarts = 3;
  s.restart.max_restarts = 0;
  s.restart.backoff_s = 0;
  s.restart.jitter = 0;
  s.init_deadline.base_s = 10;
  s.init_deadline.per_node_s = 0;
  s.init_deadline.min_s = 10;
  s.init_deadline.rtt_factor = 0;
  s.worker_master_addr = "127.0.0.1";
  s.master_is_loopback = true;
  return s;
}

// A policy with `count` nodes joined for generation 0.
struct Job {
  explicit Job(PolicySettings s = settings(), int count = 2, int nproc = 2) : policy(s) {
    joined = policy.on_nodes_joined(Generation{0}, nodes(count, nproc), t0);
  }
  // Restart decided by a failure: wait out the backoff and rejoin for the next generation.
  Decisions restart_and_rejoin(int count = 2, int nproc = 2) {
    Decisions elapsed = policy.on_backoff_elapsed(policy.generation().next());
    Decisions joined_again = policy.on_nodes_joined(policy.generation(), nodes(count, nproc), t0);
    elapsed.insert(elapsed.end(), joined_again.begin(), joined_again.end());
    return elapsed;
  }
  JobPolicy policy;
  Decisions joined;
};

// ---- planning -----------------------------------------------------------------------------

TEST(JobPolicy, EveryNodeJoinedPlansGenerationZeroWithTheComputedDeadline) {
  Job job;
  auto* plan = find<decision::PlanGeneration>(job.joined);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->generation, Generation{0});
  EXPECT_DOUBLE_EQ(plan->init_deadline_s, 10);
  EXPECT_TRUE(plan->fresh_port);  // worker_port auto
  EXPECT_EQ(job.policy.phase(), JobPhase::Running);
}

TEST(JobPolicy, LoopbackMasterWithANodeFromElsewhereIsRefused) {
  JobPolicy policy(settings());
  auto d = policy.on_nodes_joined(Generation{0}, {node(0), node(1, 2, "10.0.0.7")}, t0);
  auto* refuse = find<decision::RefuseJob>(d);
  ASSERT_TRUE(refuse);
  EXPECT_NE(refuse->reason.find("node 1 (host1) joined from 10.0.0.7"), std::string::npos) << refuse->reason;
  EXPECT_EQ(policy.phase(), JobPhase::Ended);
}

TEST(JobPolicy, DifferingProgramsWarnByDefault) {
  auto n = nodes(2);
  n[1].facts.program_fingerprint = "abc";
  n[0].facts.program_fingerprint = "def";
  JobPolicy policy(settings());
  auto d = policy.on_nodes_joined(Generation{0}, n, t0);
  EXPECT_TRUE(find<decision::PlanGeneration>(d));
  EXPECT_NE(logs(d).find("nodes differ"), std::string::npos) << logs(d);
}

TEST(JobPolicy, DifferingNcclVersionsRefusedWithVersionMismatchRefuse) {
  auto s = settings();
  s.refuse_version_mismatch = true;
  auto n = nodes(2);
  n[0].facts.nccl_version = "2.18";
  n[1].facts.nccl_version = "2.21";
  JobPolicy policy(s);
  auto d = policy.on_nodes_joined(Generation{0}, n, t0);
  auto* refuse = find<decision::RefuseJob>(d);
  ASSERT_TRUE(refuse);
  EXPECT_NE(refuse->reason.find("NCCL version '2.21'"), std::string::npos) << refuse->reason;
}

TEST(JobPolicy, AFailedPortCheckRefusesTheJob) {
  auto s = settings();
  s.worker_port_auto = false;
  Job job(s);
  EXPECT_FALSE(find<decision::PlanGeneration>(job.joined)->fresh_port);
  auto d = job.policy.on_plan_failed("port 29500 is in use");
  ASSERT_TRUE(find<decision::RefuseJob>(d));
  EXPECT_EQ(job.policy.phase(), JobPhase::Ended);
}

TEST(JobPolicy, TheDeadlineGrowsWithEveryGeneration) {
  auto s = settings();
  s.init_deadline.restart_factor = 2;
  Job job(s);
  job.policy.on_worker_failed(1, Generation{0}, failure(1, 2), t0);
  auto d = job.restart_and_rejoin();
  auto* plan = find<decision::PlanGeneration>(d);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->generation, Generation{1});
  EXPECT_DOUBLE_EQ(plan->init_deadline_s, 20);
}

TEST(JobPolicy, DedicatedNicAllowanceOnlyWhenEveryNodeChoseAnInterface) {
  auto s = settings();
  s.init_deadline.dedicated_nic_s = 7;
  s.master_is_loopback = false;
  auto n = nodes(2);
  n[0].facts.socket_ifname = "eth1";
  JobPolicy one_set(s);
  EXPECT_DOUBLE_EQ(find<decision::PlanGeneration>(one_set.on_nodes_joined(Generation{0}, n, t0))->init_deadline_s, 10);
  n[1].facts.socket_ifname = "eth1";
  JobPolicy both_set(s);
  EXPECT_DOUBLE_EQ(find<decision::PlanGeneration>(both_set.on_nodes_joined(Generation{0}, n, t0))->init_deadline_s, 17);
}

TEST(JobPolicy, PortAtFaultGetsAFreshPortInTheNextGeneration) {
  auto s = settings();
  s.worker_port_auto = false;
  Job job(s);
  job.policy.on_worker_failed(0, Generation{0}, failure(0, 0, FailurePhase::Init, FailureKind::Exited, 1,
                                            "RuntimeError: The server socket has failed to listen: EADDRINUSE"), t0);
  auto d = job.restart_and_rejoin();
  EXPECT_TRUE(find<decision::PlanGeneration>(d)->fresh_port);
}

TEST(JobPolicy, FixedPortIsKeptWhenThePortWasNotAtFault) {
  auto s = settings();
  s.worker_port_auto = false;
  Job job(s);
  job.policy.on_worker_failed(0, Generation{0}, failure(0, 0), t0);
  auto d = job.restart_and_rejoin();
  EXPECT_FALSE(find<decision::PlanGeneration>(d)->fresh_port);
}

// ---- restarts -----------------------------------------------------------------------------

TEST(JobPolicy, InitFailureRestartsTheWholeGroupOnEveryNode) {
  Job job;
  auto d = job.policy.on_worker_failed(1, Generation{0}, failure(1, 3), t0);
  auto* scheduled = find<decision::ScheduleRestart>(d);
  ASSERT_TRUE(scheduled);
  EXPECT_EQ(scheduled->generation, Generation{1});
  EXPECT_EQ(count<decision::OrderRestart>(d), 0);  // not before the backoff
  EXPECT_NE(logs(d).find("restart 1 of 3"), std::string::npos) << logs(d);
  EXPECT_EQ(job.policy.phase(), JobPhase::RestartPending);
  auto ordered = job.policy.on_backoff_elapsed(Generation{1});
  auto* restart = find<decision::OrderRestart>(ordered);
  ASSERT_TRUE(restart);
  EXPECT_EQ(restart->generation, Generation{1});
  EXPECT_NE(restart->reason.find("rank 3 on node 1"), std::string::npos) << restart->reason;
  EXPECT_EQ(job.policy.phase(), JobPhase::Rejoining);
}

TEST(JobPolicy, BackoffDoublesAndIsCapped) {
  auto s = settings();
  s.restart.backoff_s = 1;
  s.restart.backoff_max_s = 3;
  Job job(s);
  std::vector<double> delays;
  for (int i = 0; i < 3; ++i) {
    // A different error each time: the same one twice in a row would be deterministic.
    auto d = job.policy.on_worker_failed(
        0, job.policy.generation(),
        failure(0, 0, FailurePhase::Init, FailureKind::InitFailed, 3, "ncclCommInitRank failed, try " + std::to_string(i)), t0);
    ASSERT_TRUE(find<decision::ScheduleRestart>(d)) << i;
    delays.push_back(find<decision::ScheduleRestart>(d)->delay_s);
    job.restart_and_rejoin();
  }
  EXPECT_EQ(delays, (std::vector<double>{1, 2, 3}));
}

TEST(JobPolicy, InitBudgetExhaustedStopsWithTheFirstFailureAsRootCause) {
  auto s = settings();
  s.restart.init_restarts = 1;
  Job job(s);
  job.policy.on_worker_failed(1, Generation{0}, failure(1, 2), t0);
  job.restart_and_rejoin();
  auto d = job.policy.on_worker_failed(1, Generation{1}, failure(1, 3, FailurePhase::Init, FailureKind::Exited, 5), t0);
  auto* stop = find<decision::OrderStop>(d);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->exit_code, 5);
  EXPECT_EQ(stop->generation, Generation{1});
  EXPECT_NE(logs(d).find("not restarting: all 1 automatic init restarts"), std::string::npos) << logs(d);
  job.policy.on_worker_failed(0, Generation{1}, failure(0, 0), t0);  // a consequence, later
  job.policy.on_node_finished(0, Generation{1}, 143);
  auto end = job.policy.on_node_finished(1, Generation{1}, 5);
  ASSERT_TRUE(find<decision::EndJob>(end));
  EXPECT_EQ(find<decision::EndJob>(end)->exit_code, 5);
  const std::string report = logs(end);
  EXPECT_NE(report.find("JOB FAILED — root cause: rank 3"), std::string::npos) << report;
  EXPECT_NE(report.find("restarts used: 1 of 1"), std::string::npos) << report;
  EXPECT_NE(report.find("other failures: 2"), std::string::npos) << report;
}

TEST(JobPolicy, InitFailuresSpendMaxRestartsOnceTheInitBudgetIsGone) {
  auto s = settings();
  s.restart.init_restarts = 1;
  s.restart.max_restarts = 1;
  Job job(s);
  EXPECT_TRUE(find<decision::ScheduleRestart>(job.policy.on_worker_failed(0, Generation{0}, failure(0, 0), t0)));
  job.restart_and_rejoin();
  EXPECT_TRUE(find<decision::ScheduleRestart>(job.policy.on_worker_failed(0, Generation{1}, failure(0, 0), t0)));
  job.restart_and_rejoin();
  EXPECT_TRUE(find<decision::OrderStop>(job.policy.on_worker_failed(0, Generation{2}, failure(0, 0), t0)));
  EXPECT_EQ(job.policy.budget().used(), 2);
}

TEST(JobPolicy, RuntimeFailureStopsWithoutMaxRestarts) {
  Job job;
  auto d = job.policy.on_worker_failed(1, Generation{0}, failure(1, 2, FailurePhase::Runtime, FailureKind::Exited, 4), t0);
  auto* stop = find<decision::OrderStop>(d);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->exit_code, 4);
  EXPECT_NE(logs(d).find("--max-restarts"), std::string::npos) << logs(d);
}

TEST(JobPolicy, RuntimeFailureRestartsWithMaxRestartsAndNeverSpendsTheInitBudget) {
  auto s = settings();
  s.restart.max_restarts = 1;
  Job job(s);
  auto d = job.policy.on_worker_failed(1, Generation{0}, failure(1, 2, FailurePhase::Runtime), t0);
  ASSERT_TRUE(find<decision::ScheduleRestart>(d));
  EXPECT_NE(logs(d).find("restart 1 of 1"), std::string::npos) << logs(d);
  job.restart_and_rejoin();
  EXPECT_TRUE(find<decision::OrderStop>(job.policy.on_worker_failed(1, Generation{1}, failure(1, 2, FailurePhase::Runtime), t0)));
}

TEST(JobPolicy, RestartOnInitOnlyNeverRestartsRuntimeFailures) {
  auto s = settings();
  s.restart.max_restarts = 5;
  s.restart.on_runtime_failure = false;
  Job job(s);
  auto d = job.policy.on_worker_failed(0, Generation{0}, failure(0, 1, FailurePhase::Runtime), t0);
  EXPECT_TRUE(find<decision::OrderStop>(d));
  EXPECT_NE(logs(d).find("restart_on does not include runtime"), std::string::npos) << logs(d);
}

TEST(JobPolicy, AProgramThatCannotBeStartedIsNeverRestarted) {
  Job job;
  auto d = job.policy.on_worker_failed(0, Generation{0}, failure(0, 0, FailurePhase::Init, FailureKind::SpawnFailed, 127), t0);
  EXPECT_TRUE(find<decision::OrderStop>(d));
  EXPECT_EQ(count<decision::ScheduleRestart>(d), 0);
}

// The program's init_method names the rendezvous port: rank 0 fails to host its store there,
// often before any other rank's store client is seen connecting. The root cause says so.
TEST(JobPolicy, ARankThatCannotBindItsStoreOnTheRendezvousPortIsNamedAsThatMistake) {
  Job job;
  job.policy.on_rendezvous_listening(28269);
  FailureReport bind = failure(0, 0, FailurePhase::Setup, FailureKind::Exited, 1, "RuntimeError: The server socket has failed to listen");
  bind.failure.tail = {"[c10d] The server socket has failed to bind to [::]:28269 (errno: 98 - Address already in use)."};
  job.policy.on_worker_failed(0, Generation{0}, bind, t0);
  job.policy.on_node_finished(0, Generation{0}, 1);
  auto end = job.policy.on_node_finished(1, Generation{0}, 143);
  ASSERT_TRUE(find<decision::EndJob>(end)) << logs(end);
  EXPECT_NE(logs(end).find("rank 0 could not host its c10d TCPStore on port 28269, ddplaunch's rendezvous port"),
            std::string::npos) << logs(end);
  EXPECT_NE(logs(end).find("tcp://$MASTER_ADDR:$MASTER_PORT"), std::string::npos) << logs(end);
}

TEST(JobPolicy, AStoreBoundElsewhereIsNotBlamedOnTheRendezvousPort) {
  Job job;
  job.policy.on_rendezvous_listening(28269);
  FailureReport bind = failure(0, 0, FailurePhase::Setup, FailureKind::Exited, 1);
  bind.failure.tail = {"[c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use)."};
  job.policy.on_worker_failed(0, Generation{0}, bind, t0);
  job.policy.on_node_finished(0, Generation{0}, 1);
  auto end = job.policy.on_node_finished(1, Generation{0}, 143);
  EXPECT_EQ(logs(end).find("rendezvous port"), std::string::npos) << logs(end);
}

TEST(JobPolicy, ASpawnThatRanOutOfResourcesIsRestarted) {
  Job job;
  auto d = job.policy.on_worker_failed(
      0, Generation{0}, failure(0, 1, FailurePhase::Init, FailureKind::SpawnNoResources, 127,
                    "the launcher is out of file descriptors (EMFILE): Too many open files"), t0);
  EXPECT_EQ(count<decision::ScheduleRestart>(d), 1) << logs(d);
  EXPECT_FALSE(find<decision::OrderStop>(d));
  EXPECT_EQ(logs(d).find("not restartable"), std::string::npos) << logs(d);
}

TEST(JobPolicy, FailuresFromTwoNodesInOneGenerationMakeOneDecision) {
  Job job;
  auto first = job.policy.on_worker_failed(1, Generation{0}, failure(1, 2), t0);
  auto second = job.policy.on_worker_failed(0, Generation{0}, failure(0, 0), t0);
  EXPECT_EQ(count<decision::ScheduleRestart>(first), 1);
  EXPECT_EQ(count<decision::ScheduleRestart>(second) + count<decision::OrderStop>(second), 0);
  EXPECT_EQ(job.policy.budget().used(), 1);
}

TEST(JobPolicy, AStaleReportFromAnOlderGenerationIsIgnored) {
  Job job;
  job.policy.on_worker_failed(1, Generation{0}, failure(1, 2), t0);
  job.restart_and_rejoin();
  auto d = job.policy.on_worker_failed(1, Generation{0}, failure(1, 2), t0);  // generation 0, arriving late
  EXPECT_TRUE(d.empty());
  EXPECT_TRUE(job.policy.on_node_finished(1, Generation{0}, 1).empty());
  EXPECT_EQ(job.policy.phase(), JobPhase::Running);
}

TEST(JobPolicy, AFailureAfterTheStopDecisionIsLoggedButDecidesNothing) {
  Job job;
  job.policy.on_worker_failed(0, Generation{0}, failure(0, 1, FailurePhase::Runtime), t0);
  auto d = job.policy.on_worker_failed(1, Generation{0}, failure(1, 2, FailurePhase::Runtime), t0);
  EXPECT_EQ(count<decision::OrderStop>(d), 0);
  EXPECT_NE(logs(d).find("failure: rank 2"), std::string::npos);
}

// ---- the end of the job -------------------------------------------------------------------

TEST(JobPolicy, EveryNodeFinishedSuccessfullyEndsTheJobWithZero) {
  Job job;
  EXPECT_TRUE(job.policy.on_node_finished(0, Generation{0}, 0).empty());
  auto d = job.policy.on_node_finished(1, Generation{0}, 0);
  ASSERT_TRUE(find<decision::EndJob>(d));
  EXPECT_EQ(find<decision::EndJob>(d)->exit_code, 0);
  EXPECT_NE(logs(d).find("job succeeded"), std::string::npos);
  EXPECT_EQ(job.policy.phase(), JobPhase::Ended);
}

TEST(JobPolicy, ANodeFinishingWithAnErrorAndNoFailureReportEndsWithItsCode) {
  Job job;
  job.policy.on_node_finished(0, Generation{0}, 0);
  EXPECT_EQ(find<decision::EndJob>(job.policy.on_node_finished(1, Generation{0}, 9))->exit_code, 9);
}

TEST(JobPolicy, ANodeProblemStopsTheJobWithItsExitCode) {
  Job job;
  auto d = job.policy.on_node_problem(1, Generation{0}, "NCCL_SOCKET_IFNAME=bogus0 selects no interface", 2);
  auto* stop = find<decision::OrderStop>(d);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->exit_code, 2);
  EXPECT_NE(stop->reason.find("node 1: NCCL_SOCKET_IFNAME"), std::string::npos);
  job.policy.on_node_finished(0, Generation{0}, 143);
  EXPECT_EQ(find<decision::EndJob>(job.policy.on_node_finished(1, Generation{0}, 2))->exit_code, 2);
}

TEST(JobPolicy, ASignalDuringTheRestartBackoffStopsInsteadOfRestarting) {
  Job job;
  job.policy.on_worker_failed(1, Generation{0}, failure(1, 2), t0);
  auto d = job.policy.on_node_problem(0, Generation{0}, "interrupted by SIGINT on host0", 130);
  EXPECT_EQ(find<decision::OrderStop>(d)->exit_code, 130);
  EXPECT_TRUE(job.policy.on_backoff_elapsed(Generation{1}).empty());  // the timer fires anyway: nothing happens
  job.policy.on_node_finished(0, Generation{0}, 130);
  EXPECT_EQ(find<decision::EndJob>(job.policy.on_node_finished(1, Generation{0}, 143))->exit_code, 130);
}

// Every node finished its generation before the stop: nothing would report again, so the
// stop itself ends the job (a master in a backoff once ignored SIGTERM forever).
TEST(JobPolicy, AStopAfterEveryNodeFinishedInTheBackoffEndsTheJobAtOnce) {
  Job job;
  EXPECT_TRUE(find<decision::ScheduleRestart>(job.policy.on_worker_failed(1, Generation{0}, failure(1, 2), t0)));
  EXPECT_TRUE(job.policy.on_node_finished(0, Generation{0}, 1).empty());
  EXPECT_TRUE(job.policy.on_node_finished(1, Generation{0}, 1).empty());  // a restart is on its way
  auto d = job.policy.on_node_problem(0, Generation{0}, "interrupted by SIGTERM on host0", 143);
  EXPECT_TRUE(find<decision::OrderStop>(d));
  ASSERT_TRUE(find<decision::EndJob>(d));
  EXPECT_EQ(find<decision::EndJob>(d)->exit_code, 143);
  EXPECT_TRUE(job.policy.on_backoff_elapsed(Generation{1}).empty());
}

TEST(JobPolicy, ANodeLostAfterEveryNodeFinishedInTheBackoffEndsTheJobAtOnce) {
  Job job;
  job.policy.on_worker_failed(1, Generation{0}, failure(1, 2), t0);
  job.policy.on_node_finished(0, Generation{0}, 1);
  job.policy.on_node_finished(1, Generation{0}, 1);
  auto d = job.policy.on_node_lost(1, "connection closed");
  ASSERT_TRUE(find<decision::EndJob>(d));
  EXPECT_EQ(find<decision::EndJob>(d)->exit_code, 1);
  EXPECT_TRUE(job.policy.on_backoff_elapsed(Generation{1}).empty());
}

TEST(JobPolicy, ANodeLostDuringInitStopsTheOthersAndEndsWhenTheyFinished) {
  Job job(settings(), 3);
  job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Init, 1)}, t0);
  auto d = job.policy.on_node_lost(2, "heartbeat timeout");
  auto* stop = find<decision::OrderStop>(d);
  ASSERT_TRUE(stop);
  EXPECT_NE(stop->reason.find("node 2 (host2, 127.0.0.1) was lost: heartbeat timeout"), std::string::npos);
  EXPECT_TRUE(job.policy.on_node_finished(0, Generation{0}, 143).empty());
  EXPECT_EQ(find<decision::EndJob>(job.policy.on_node_finished(1, Generation{0}, 143))->exit_code, 1);
}

TEST(JobPolicy, ANodeLostWhileRunningEndsTheJobWithOne) {
  Job job;
  job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Running, 1), rank(3, RankPhase::Running, 1)}, t0);
  EXPECT_TRUE(find<decision::OrderStop>(job.policy.on_node_lost(1, "connection closed")));
  EXPECT_EQ(find<decision::EndJob>(job.policy.on_node_finished(0, Generation{0}, 143))->exit_code, 1);
}

TEST(JobPolicy, ANodeLostWhileStoppingOrdersNoSecondStop) {
  Job job;
  job.policy.on_worker_failed(0, Generation{0}, failure(0, 0, FailurePhase::Runtime, FailureKind::Exited, 4), t0);
  auto d = job.policy.on_node_lost(1, "connection closed");
  EXPECT_EQ(count<decision::OrderStop>(d), 0);
  EXPECT_EQ(find<decision::EndJob>(job.policy.on_node_finished(0, Generation{0}, 4))->exit_code, 4);
}

TEST(JobPolicy, ANodeLostDuringTheBackoffCancelsTheRestart) {
  Job job;
  job.policy.on_worker_failed(1, Generation{0}, failure(1, 2), t0);
  EXPECT_TRUE(find<decision::OrderStop>(job.policy.on_node_lost(1, "link down")));
  EXPECT_TRUE(job.policy.on_backoff_elapsed(Generation{1}).empty());
  EXPECT_TRUE(find<decision::EndJob>(job.policy.on_node_finished(0, Generation{0}, 143)));
}

TEST(JobPolicy, AJoinTimeoutAbortsTheWaitNamingTheMissingNodes) {
  JobPolicy policy(settings());
  auto d = policy.on_join_timeout("join timeout: after 300 s only 2 of 3 nodes have joined; missing node rank 2", false);
  auto* abort = find<decision::AbortJoin>(d);
  ASSERT_TRUE(abort);
  EXPECT_NE(abort->reason.find("missing node rank 2"), std::string::npos);
  EXPECT_NE(abort->reason.find("--job-id"), std::string::npos);
  EXPECT_EQ(policy.phase(), JobPhase::Ended);
}

// "The process group is up": said once per generation, when the last rank reports init_ok,
// with the time since the generation started; not before, and not again for a later
// communicator of the same generation.
TEST(JobPolicy, SaysOncePerGenerationWhenEveryRankFinishedInit) {
  using namespace std::chrono_literals;
  Job job;
  auto says_done = [](const Decisions& d) {
    for (const auto& x : d)
      if (auto* log = std::get_if<decision::Log>(&x); log && log->text.find("finished init") != std::string::npos)
        return log->text;
    return std::string();
  };
  EXPECT_EQ(says_done(job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Running, 1), rank(1, RankPhase::Running, 1)}, t0 + 1s)), "");
  EXPECT_EQ(says_done(job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Init, 1), rank(3, RankPhase::Running, 1)}, t0 + 2s)), "");
  std::string done = says_done(job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Running, 1), rank(3, RankPhase::Running, 1)}, t0 + 3s));
  EXPECT_EQ(done, "generation 0: all 4 ranks finished init (init_ok) 3.00 s after the start (1.00 s of init after "
                  "the last rank entered it)");
  // The history learns the init phase only (last rank in init → every rank running), not setup.
  ASSERT_TRUE(job.policy.init_seconds().has_value());
  EXPECT_DOUBLE_EQ(*job.policy.init_seconds(), 1.0);
  // A later communicator (init again, then running): nothing new.
  job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 2), rank(1, RankPhase::Init, 2)}, t0 + 4s);
  EXPECT_EQ(says_done(job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Running, 2), rank(1, RankPhase::Running, 2)}, t0 + 5s)), "");
}

// A rank that runs without ever reporting init (no shim, a non-torch program) is not "done".
TEST(JobPolicy, RanksRunningWithoutAnInitReportAreNotAnnouncedAsInitialised) {
  Job job;
  auto d = job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Running, 0), rank(1, RankPhase::Running, 0)}, t0);
  auto d2 = job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Running, 0), rank(3, RankPhase::Running, 0)}, t0);
  d.insert(d.end(), d2.begin(), d2.end());
  for (const auto& x : d) {
    if (auto* log = std::get_if<decision::Log>(&x)) {
      EXPECT_EQ(log->text.find("finished init"), std::string::npos);
    }
  }
}

// The GPU facts a node reports (count, driver, CUDA, NCCL) are columns of doctor's table.
TEST(DoctorTable, ShowsEveryNodesGpuCountDriverCudaAndNcclVersions) {
  auto gpu_node = node(0, 8);
  gpu_node.facts.gpu_count = 8;
  gpu_node.facts.driver_version = "580.159.04";
  gpu_node.facts.cuda_version = "13.0";
  gpu_node.facts.nccl_version = "2.28.9";
  std::string table = render_doctor_table({gpu_node}, {{0, DoctorRow{true, "eth0", ""}}}, 29500, "35 s", true);
  std::istringstream lines(table);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  std::istringstream h(header), r(row);
  std::vector<std::string> names, values;
  for (std::string w; h >> w;) names.push_back(w);
  for (std::string w; r >> w;) values.push_back(w);
  ASSERT_EQ(names.size(), values.size()) << table;
  auto column = [&](const std::string& name) {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return values[i];
    return std::string("(no column " + name + ")");
  };
  EXPECT_EQ(column("gpus"), "8") << table;
  EXPECT_EQ(column("driver"), "580.159.04") << table;
  EXPECT_EQ(column("cuda"), "13.0") << table;
  EXPECT_EQ(column("nccl"), "2.28.9") << table;
  EXPECT_EQ(column("verdict"), "ok") << table;
}

TEST(JobPolicy, DoctorPrintsOneTableAndEndsWithTheVerdict) {
  auto s = settings();
  s.doctor = true;
  Job ok(s);
  EXPECT_TRUE(ok.policy.on_doctor_report(0, true, "eth0", "").empty());
  auto d = ok.policy.on_doctor_report(1, true, "eth0", "");
  ASSERT_TRUE(find<decision::PrintTable>(d));
  EXPECT_NE(find<decision::PrintTable>(d)->text.find("doctor: the job would start."), std::string::npos);
  EXPECT_EQ(find<decision::EndJob>(d)->exit_code, 0);

  Job bad(s);
  bad.policy.on_doctor_report(0, true, "eth0", "");
  auto failed = bad.policy.on_doctor_report(1, false, "-", "NCCL_SOCKET_IFNAME=bogus0 selects no interface");
  EXPECT_NE(find<decision::PrintTable>(failed)->text.find("FAIL: NCCL_SOCKET_IFNAME=bogus0"), std::string::npos);
  EXPECT_EQ(find<decision::EndJob>(failed)->exit_code, 1);
}

// The run history's record of the hosts is a section of doctor's table, before the verdict.
TEST(JobPolicy, DoctorsTableShowsTheRunHistorysHostsBeforeTheVerdict) {
  auto s = settings();
  s.doctor = true;
  s.doctor_host_record = "hosts that caused trouble in 2 or more of the last 10 runs (run history /h):\n  host h3 ...\n";
  Job job(s);
  job.policy.on_doctor_report(0, true, "eth0", "");
  const std::string table = find<decision::PrintTable>(job.policy.on_doctor_report(1, true, "eth0", ""))->text;
  const auto record = table.find(s.doctor_host_record);
  ASSERT_NE(record, std::string::npos) << table;
  EXPECT_LT(record, table.find("doctor: the job would start.")) << table;
}

// ---- the group's init deadline ------------------------------------------------------------

TEST(JobPolicy, NoInitDeadlineWhileARankIsStillInSetup) {
  Job job;
  auto d = job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Init, 1)}, t0);
  d = job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Init, 1), rank(3, RankPhase::Setup, 0)}, t0);
  EXPECT_EQ(count<decision::ArmInitDeadline>(d), 0);
}

TEST(JobPolicy, TheInitDeadlineStartsWhenTheLastRankEntersInit) {
  Job job;
  job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Running, 1)}, t0);
  auto d = job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Init, 1), rank(3, RankPhase::Init, 1)}, t0 + 40s);
  auto* arm = find<decision::ArmInitDeadline>(d);
  ASSERT_TRUE(arm);
  EXPECT_DOUBLE_EQ(arm->seconds, 10);
  EXPECT_EQ(arm->generation, Generation{0});
}

TEST(JobPolicy, APassedInitDeadlineIsAnInitFailureNamingTheRankAndTheKeyToChange) {
  Job job;
  job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Running, 1)}, t0);
  auto armed = job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Running, 1), rank(3, RankPhase::Running, 1)}, t0);
  auto* arm = find<decision::ArmInitDeadline>(armed);
  ASSERT_TRUE(arm);
  auto d = job.policy.on_init_deadline(Generation{0}, arm->serial, t0);
  ASSERT_TRUE(find<decision::ScheduleRestart>(d));
  const std::string text = logs(d);
  EXPECT_NE(text.find("rank 0 on node 0 (host0) pid 100: passed the group's init deadline during init"), std::string::npos)
      << text;
  EXPECT_NE(text.find("timeout.base_s"), std::string::npos) << text;
}

// A person holds rank 1 in its debugger while the others wait in init: the deadline is
// disarmed (its old timer firing does nothing) and armed afresh, whole, when rank 1 is released.
TEST(JobPolicy, TheInitDeadlineIsSuspendedWhileARankIsHeldInItsDebugger) {
  Job job;
  job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Init, 1)}, t0);
  auto armed = job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Init, 1), rank(3, RankPhase::Init, 1)}, t0);
  const int first = find<decision::ArmInitDeadline>(armed)->serial;
  RankReport held = rank(1, RankPhase::Init, 1);
  held.state = std::string(RankReport::kDebuggingState);
  auto d = job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), held}, t0 + 1s);
  EXPECT_EQ(count<decision::ArmInitDeadline>(d), 0);
  EXPECT_TRUE(job.policy.on_init_deadline(Generation{0}, first, t0 + 1h).empty());  // held: nothing fails
  EXPECT_EQ(job.policy.phase(), JobPhase::Running);
  d = job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Init, 1)}, t0 + 1h);
  auto* again = find<decision::ArmInitDeadline>(d);
  ASSERT_TRUE(again);
  EXPECT_NE(again->serial, first);
  EXPECT_DOUBLE_EQ(again->seconds, 10);  // the whole deadline, from the release
}

// `q` at the debug console, confirmed: the job stops on every node with that root cause,
// exit status 1, and no restart is spent even with restarts left.
TEST(JobPolicy, QuittingADebuggerStopsTheJobWithThatRootCauseAndNoRestart) {
  PolicySettings s = settings();
  s.restart.max_restarts = 3;
  Job job(s);
  job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Running, 1), rank(3, RankPhase::Running, 1)}, t0);
  EXPECT_TRUE(job.policy.on_debugger_quit(Generation{1}, 3).empty());  // another generation's rank: nothing
  auto d = job.policy.on_debugger_quit(Generation{0}, 3);
  auto* stop = find<decision::OrderStop>(d);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->exit_code, 1);
  EXPECT_EQ(stop->reason, "rank 3 quit the debugger");
  EXPECT_EQ(count<decision::ScheduleRestart>(d), 0);
  // The workers die of the stop; the nodes finish; the root cause is the person's decision.
  FailureReport killed;
  killed.host = "host1";
  killed.failure.node_rank = 1;
  killed.failure.global_rank = 2;
  killed.failure.phase = FailurePhase::Runtime;
  killed.failure.status = ExitStatus{true, 0, 15, false};
  job.policy.on_worker_failed(1, Generation{0}, killed, t0 + 1s);
  job.policy.on_node_finished(0, Generation{0}, 1);
  auto end = job.policy.on_node_finished(1, Generation{0}, 1);
  ASSERT_TRUE(find<decision::EndJob>(end));
  EXPECT_EQ(find<decision::EndJob>(end)->exit_code, 1);
  const std::string text = logs(end);
  EXPECT_NE(text.find("root cause: rank 3 (local rank 1) on node 1 (host1)"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 3 (local rank 1) on node 1 (host1), pid 103, quit its debugger (`q` at the console) during "
                      "runtime"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("a person ended the job on purpose"), std::string::npos) << text;
  EXPECT_EQ(text.find("at rank's debugger"), std::string::npos) << text;
  EXPECT_EQ(job.policy.budget().used(), 0);
}

TEST(JobPolicy, ADeadlineFiringAfterEveryRankIsRunningIsIgnored) {
  Job job;
  job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Init, 1)}, t0);
  auto armed = job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Init, 1), rank(3, RankPhase::Init, 1)}, t0);
  const int serial = find<decision::ArmInitDeadline>(armed)->serial;
  job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Running, 1), rank(1, RankPhase::Running, 1)}, t0 + 1s);
  job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Running, 1), rank(3, RankPhase::Running, 1)}, t0 + 1s);
  EXPECT_TRUE(job.policy.on_init_deadline(Generation{0}, serial, t0).empty());
  EXPECT_EQ(job.policy.phase(), JobPhase::Running);
}

TEST(JobPolicy, ALazyCommunicatorInitWaitsForTheRankThatHasNotReachedIt) {
  // torch 2.x: every rank is running after init_process_group; rank 1 enters NCCL
  // communicator init at its first collective while rank 0 still evaluates alone.
  Job job(settings(), 1);
  job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Running, 1), rank(1, RankPhase::Running, 1)}, t0);
  auto d = job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Running, 1), rank(1, RankPhase::Init, 2)}, t0 + 1s);
  EXPECT_EQ(count<decision::ArmInitDeadline>(d), 0);
  d = job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 2), rank(1, RankPhase::Init, 2)}, t0 + 60s);
  EXPECT_EQ(count<decision::ArmInitDeadline>(d), 1);  // now both are in that init: it is judged
}

TEST(JobPolicy, AnExitedRankDoesNotHoldTheDeadlineBack) {
  Job job(settings(), 1);
  auto d = job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Exited, 0), rank(1, RankPhase::Init, 1)}, t0);
  EXPECT_EQ(count<decision::ArmInitDeadline>(d), 1);
}

TEST(JobPolicy, RanksWaitingForARankInSetupAreReportedAtASteadyPaceAndNeverKilled) {
  Job job;
  job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Init, 1)}, t0 + 1s);
  job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Init, 1), rank(3, RankPhase::Setup, 0)}, t0 + 1s);
  EXPECT_TRUE(job.policy.on_tick(t0 + 5s).empty());  // too early to bother anyone
  auto d = job.policy.on_tick(t0 + 240s);
  const std::string text = logs(d);
  EXPECT_NE(text.find("3 rank(s) wait in init for rank 3 (node 1), still in setup after 4 min"), std::string::npos)
      << text;
  EXPECT_TRUE(job.policy.on_tick(t0 + 250s).empty());  // the next one comes after the interval
  EXPECT_FALSE(job.policy.on_tick(t0 + 271s).empty());
  EXPECT_EQ(count<decision::OrderStop>(d) + count<decision::ScheduleRestart>(d), 0);
  EXPECT_EQ(job.policy.phase(), JobPhase::Running);
}

TEST(JobPolicy, SetupIsUnboundedByDefault) {
  Job job;
  EXPECT_TRUE(job.policy.on_tick(t0 + 10h).empty());
  EXPECT_EQ(job.policy.phase(), JobPhase::Running);
}

TEST(JobPolicy, SetupTimeoutWhenTheUserSetsOne) {
  auto s = settings();
  s.setup_timeout_s = 60;
  Job job(s);
  job.policy.on_ranks_reported(0, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Init, 1)}, t0 + 1s);
  EXPECT_EQ(count<decision::ScheduleRestart>(job.policy.on_tick(t0 + 30s)), 0);  // a wait report at most
  auto d = job.policy.on_tick(t0 + 61s);
  ASSERT_TRUE(find<decision::ScheduleRestart>(d));
  EXPECT_NE(logs(d).find("setup_timeout_s"), std::string::npos) << logs(d);
  EXPECT_NE(logs(d).find("rank 2 on node 1"), std::string::npos) << logs(d);
}

TEST(JobPolicy, ReportsAboutRanksOfAnotherNodeAreIgnored) {
  Job job;
  // Node 1 claims ranks 0 and 1 (node 0's) are in init: that must not arm anything.
  job.policy.on_ranks_reported(1, Generation{0}, {rank(2, RankPhase::Init, 1), rank(3, RankPhase::Init, 1)}, t0);
  auto d = job.policy.on_ranks_reported(1, Generation{0}, {rank(0, RankPhase::Init, 1), rank(1, RankPhase::Init, 1)}, t0);
  EXPECT_EQ(count<decision::ArmInitDeadline>(d), 0);
  EXPECT_EQ(job.policy.ranks().ranks()[0].last.phase, RankPhase::Setup);
}

TEST(JobPolicy, AWorkerFailureReportForAnotherNodeIsPinnedToTheSender) {
  // The coordinator pins node_rank to the connection; the policy keys its records by it.
  Job job;
  job.policy.on_worker_failed(1, Generation{0}, failure(1, 2), t0);
  EXPECT_NE(job.policy.last_error(1).find("rank 2 on node 1"), std::string::npos);
  EXPECT_TRUE(job.policy.last_error(0).empty());
}

TEST(JobPolicy, AFailureReportNamingAnotherNodesRankIsIgnoredAndLogged) {
  // Node 1 holds ranks 2 and 3: a report from it about rank 0 (node 0's) or rank 9 (nobody's)
  // must neither restart nor stop the job, and the log names the sender.
  Job job;
  for (int foreign : {0, 9, -1}) {
    auto d = job.policy.on_worker_failed(1, Generation{0}, failure(1, foreign), t0);
    EXPECT_EQ(count<decision::ScheduleRestart>(d) + count<decision::OrderStop>(d) + count<decision::EndJob>(d), 0)
        << logs(d);
    EXPECT_NE(logs(d).find("ignored a failure report from node 1 (host1) about rank " + std::to_string(foreign)),
              std::string::npos)
        << logs(d);
  }
  EXPECT_EQ(job.policy.phase(), JobPhase::Running);
  EXPECT_TRUE(job.policy.last_error(1).empty());
  // Its own rank still counts.
  EXPECT_TRUE(find<decision::ScheduleRestart>(job.policy.on_worker_failed(1, Generation{0}, failure(1, 3), t0)));
}

TEST(JobPolicy, ANodeProblemClaimingExitCodeZeroStillFailsTheJob) {
  // A peer sending node_problem exit_code=0 once made the master log "job succeeded".
  Job job;
  EXPECT_EQ(find<decision::OrderStop>(job.policy.on_node_problem(1, Generation{0}, "all good, stop now", 0))->exit_code, 1);
  Decisions end = job.policy.on_node_finished(0, Generation{0}, 0);
  for (const auto& d : job.policy.on_node_finished(1, Generation{0}, 0)) end.push_back(d);
  ASSERT_EQ(count<decision::EndJob>(end), 1);
  EXPECT_EQ(find<decision::EndJob>(end)->exit_code, 1);
  EXPECT_EQ(logs(end).find("job succeeded"), std::string::npos) << logs(end);
}

// The worker port the shell chose for a generation is what doctor's table and `status` show;
// a port told for another generation (a plan overtaken) changes nothing.
TEST(JobPolicy, TheWorkerPortIsTheOneToldForTheCurrentGeneration) {
  Job job;
  EXPECT_EQ(job.policy.worker_port(), 0);
  EXPECT_TRUE(job.policy.on_generation_planned(Generation{0}, 29511).empty());
  EXPECT_EQ(job.policy.worker_port(), 29511);
  job.policy.on_generation_planned(Generation{3}, 29999);
  EXPECT_EQ(job.policy.worker_port(), 29511);
}

}  // namespace
}  // namespace ddplaunch
