// NodePolicy driven directly: every transition of a node's state machine and
// every way a node ends itself, as short scripts of events and the decisions they must
// produce. No sockets, timers or processes.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "ddplaunch/base/exit_codes.h"
#include "policy/node_policy.h"
#include "policy_decisions.h"

namespace ddplaunch {
namespace {

using namespace node_decision;
using testing::count;
using testing::find;
using testing::logs;
using Decisions = NodePolicy::Decisions;

NodePolicySettings settings(bool host_server = false) {
  NodePolicySettings s;
  s.host_server = host_server;
  s.grace_s = 3;
  s.hostname = "host1";
  s.master_host = "node0";
  s.master_ip = "10.0.0.1";
  s.rendezvous_port = 29500;
  s.nodes = 2;
  s.join_timeout_s = 600;
  return s;
}

// A node that joined and runs generation `generation`'s workers.
NodePolicy running(Generation generation = {}, NodePolicySettings s = settings()) {
  NodePolicy p(std::move(s));
  EXPECT_TRUE(find<StartWorkers>(p.on_assignment(AssignmentFacts{generation})));
  return p;
}

// An assignment of `generation` that the node takes, its workers to start.
void take_and_start(NodePolicy& p, Generation generation) {
  Decisions d = p.on_assignment(AssignmentFacts{generation});
  EXPECT_TRUE(find<TakeAssignment>(d));
  EXPECT_TRUE(find<StartWorkers>(d));
  EXPECT_EQ(p.state(), NodeState::Running);
}

TEST(NodePolicy, AnAssignmentIsTakenOnlyWhileJoiningOrRejoining) {
  NodePolicy p(settings());
  EXPECT_EQ(p.state(), NodeState::Joining);
  AssignmentFacts first{Generation{0}};
  first.probe_due = true;
  Decisions d = p.on_assignment(first);
  EXPECT_TRUE(find<TakeAssignment>(d));
  EXPECT_TRUE(find<ProbePeers>(d));
  EXPECT_FALSE(find<StartWorkers>(d)) << "the workers wait for the master's verdict";
  EXPECT_EQ(p.state(), NodeState::Probing);
  EXPECT_TRUE(p.on_assignment(first).empty());  // a duplicate while probing
  EXPECT_TRUE(p.on_probe_verdict(Generation{1}, "eth0").empty());  // another generation's verdict
  d = p.on_probe_verdict(Generation{0}, "eth0");
  ASSERT_TRUE(find<StartWorkers>(d));
  EXPECT_EQ(find<StartWorkers>(d)->probe_ifname, "eth0");
  EXPECT_EQ(p.state(), NodeState::Running);
  EXPECT_TRUE(p.on_probe_verdict(Generation{0}, "eth0").empty());  // running already
  EXPECT_TRUE(p.on_assignment(AssignmentFacts{Generation{1}}).empty());  // running: no assignment without a restart
  EXPECT_EQ(p.generation(), Generation{0});
}

TEST(NodePolicy, OnlyTheFirstAssignmentOfGenerationZeroProbesThePeers) {
  AssignmentFacts later{Generation{3}};
  later.probe_due = true;
  NodePolicy p(settings());
  EXPECT_TRUE(find<StartWorkers>(p.on_assignment(later))) << "a launcher joining a moved coordinator later";
  NodePolicy q(settings());
  EXPECT_TRUE(find<StartWorkers>(q.on_assignment(AssignmentFacts{Generation{0}}))) << "not due: no probe";
}

TEST(NodePolicy, ARestartOrderStopsTheWorkersThenRejoinsForTheNextGeneration) {
  NodePolicy p = running();
  Decisions d = p.on_restart_order(Generation{1}, "rank 3 failed", true);
  ASSERT_TRUE(find<StopWorkers>(d));
  EXPECT_FALSE(find<StopWorkers>(d)->now);
  EXPECT_NE(logs(d).find("master ordered a group restart (generation 1): rank 3 failed"), std::string::npos);
  EXPECT_EQ(p.state(), NodeState::Stopping);
  d = p.on_workers_stopped();
  ASSERT_TRUE(find<Rejoin>(d));
  EXPECT_EQ(find<Rejoin>(d)->generation, Generation{1});
  EXPECT_EQ(p.state(), NodeState::Rejoining);
  take_and_start(p, Generation{1});
  EXPECT_EQ(p.generation(), Generation{1});
}

TEST(NodePolicy, ARestartOrderWithNoWorkerLeftRejoinsAtOnce) {
  NodePolicy p = running();
  Decisions d = p.on_restart_order(Generation{1}, "why", false);
  EXPECT_EQ(count<StopWorkers>(d), 0);
  ASSERT_TRUE(find<Rejoin>(d));
  EXPECT_EQ(p.state(), NodeState::Rejoining);
}

TEST(NodePolicy, OrdersBeforeTheNodeJoinedOrAfterItFinishedChangeNothing) {
  NodePolicy joining(settings());
  EXPECT_TRUE(joining.on_restart_order(Generation{1}, "x", true).empty());
  EXPECT_TRUE(joining.on_stop_order(Generation{0}, "x", true).empty());
  NodePolicy done = running();
  ASSERT_TRUE(find<Finish>(done.on_job_end(0)));
  EXPECT_TRUE(done.on_restart_order(Generation{1}, "x", true).empty());
  EXPECT_TRUE(done.on_stop_order(Generation{0}, "x", true).empty());
  EXPECT_TRUE(done.on_job_end(1).empty());  // ends once
  EXPECT_TRUE(done.on_lost("gone", 1, false).empty());
}

TEST(NodePolicy, AStopOrderReportsStoppedAndASecondStopChangesNothing) {
  NodePolicy p = running(Generation{2});
  Decisions d = p.on_stop_order(Generation{2}, "node 0: rank 1 failed", true);
  EXPECT_TRUE(find<StopWorkers>(d));
  EXPECT_NE(logs(d).find("master stopped the job: node 0: rank 1 failed"), std::string::npos);
  Decisions again = p.on_stop_order(Generation{2}, "again", true);
  EXPECT_EQ(count<StopWorkers>(again), 0);
  d = p.on_workers_stopped();
  ASSERT_TRUE(find<ReportFinished>(d));
  EXPECT_EQ(find<ReportFinished>(d)->generation, Generation{2});
  EXPECT_EQ(find<ReportFinished>(d)->summary, "stopped");
  EXPECT_EQ(find<ReportFinished>(d)->exit_code, 0);
  EXPECT_EQ(p.state(), NodeState::Reporting);
  EXPECT_EQ(find<Finish>(p.on_job_end(1))->exit_code, 1);
  EXPECT_TRUE(p.finished());
}

TEST(NodePolicy, TheMasterDoesNotLogItsOwnStopOrder) {
  NodePolicy p = running(Generation{0}, settings(true));
  EXPECT_EQ(logs(p.on_stop_order(Generation{0}, "why", true)), "");
}

TEST(NodePolicy, AStopOrderDuringARestartsStopTurnsItIntoAReport) {
  NodePolicy p = running();
  p.on_restart_order(Generation{1}, "why", true);
  EXPECT_TRUE(find<StopWorkers>(p.on_stop_order(Generation{1}, "stop", true)));
  EXPECT_TRUE(find<ReportFinished>(p.on_workers_stopped()));
}

TEST(NodePolicy, WorkersThatAllEndedReportTheFirstFailedRank) {
  NodePolicy p = running(Generation{3});
  EXPECT_TRUE(p.on_group_finished(Generation{2}, 1, "stale").empty());  // an older generation's outcome
  Decisions d = p.on_group_finished(Generation{3}, 7, "rank 2: exit code 7");
  ASSERT_TRUE(find<ReportFinished>(d));
  EXPECT_EQ(find<ReportFinished>(d)->exit_code, 7);
  EXPECT_EQ(find<ReportFinished>(d)->summary, "rank 2: exit code 7");
  EXPECT_EQ(p.state(), NodeState::Reporting);
}

TEST(NodePolicy, ALocalProblemIsReportedAndWinsOverTheWorkersCode) {
  NodePolicy p = running(Generation{0});
  Decisions d = p.on_local_problem("NCCL_SOCKET_IFNAME=eth9: no such interface", kExitConfigError);
  ASSERT_TRUE(find<ReportProblem>(d));
  EXPECT_EQ(find<ReportProblem>(d)->exit_code, kExitConfigError);
  EXPECT_NE(logs(d).find("eth9"), std::string::npos);
  EXPECT_EQ(find<ReportFinished>(p.on_group_finished(Generation{0}, 0, "all workers succeeded"))->exit_code, kExitConfigError);
}

TEST(NodePolicy, AFirstInterruptStopsWithGraceTellsTheMasterAndArmsTheExitBound) {
  NodePolicy p = running(Generation{4});
  Decisions d = p.on_interrupt(SIGTERM, true);
  ASSERT_TRUE(find<ReportProblem>(d));
  EXPECT_EQ(find<ReportProblem>(d)->text, "interrupted by SIGTERM on host1");
  EXPECT_EQ(find<ReportProblem>(d)->exit_code, 143);
  EXPECT_EQ(find<ReportProblem>(d)->generation, Generation{4});
  ASSERT_TRUE(find<StopWorkers>(d));
  EXPECT_FALSE(find<StopWorkers>(d)->now);
  ASSERT_TRUE(find<ArmExitTimer>(d));
  EXPECT_DOUBLE_EQ(find<ArmExitTimer>(d)->seconds, 3 + NodePolicy::kExitBoundAfterGraceS);
  EXPECT_EQ(find<ArmExitTimer>(d)->exit_code, 143);
  // The workers gone, the report carries the signal's status whatever they exited with.
  EXPECT_EQ(find<ReportFinished>(p.on_workers_stopped())->exit_code, 143);
  // The master never answers: the timer ends the node.
  EXPECT_EQ(find<Finish>(p.on_exit_timer(143))->exit_code, 143);
}

TEST(NodePolicy, ASecondInterruptKillsTheWorkersNowAndEndsWhenNoneIsLeft) {
  NodePolicy p = running();
  p.on_interrupt(SIGINT, true);
  Decisions d = p.on_interrupt(SIGINT, true);
  ASSERT_TRUE(find<StopWorkers>(d));
  EXPECT_TRUE(find<StopWorkers>(d)->now);
  EXPECT_EQ(count<Finish>(d), 0);  // still some to reap
  NodePolicy q = running();
  q.on_interrupt(SIGINT, true);
  EXPECT_EQ(find<Finish>(q.on_interrupt(SIGINT, false))->exit_code, 130);
}

TEST(NodePolicy, AnInterruptBeforeJoiningEndsAtOnce) {
  NodePolicy p(settings());
  Decisions d = p.on_interrupt(SIGHUP, false);
  EXPECT_EQ(find<Finish>(d)->exit_code, 128 + SIGHUP);
  EXPECT_EQ(count<ReportProblem>(d), 0);
}

TEST(NodePolicy, ALostMasterStopsTheWorkersThenEndsWithTheGivenCode) {
  NodePolicy p = running();
  Decisions d = p.on_lost("connection closed by the peer", kExitFailure, true);
  EXPECT_NE(logs(d).find("lost the master node0:29500 — connection closed by the peer — stopping this node's workers"),
            std::string::npos);
  EXPECT_TRUE(find<StopWorkers>(d));
  EXPECT_EQ(find<Finish>(p.on_workers_stopped())->exit_code, kExitFailure);
}

TEST(NodePolicy, ALostMasterKeepsTheNodesOwnConfigurationError) {
  NodePolicy q = running();  // no problem of its own: the loss's code
  EXPECT_EQ(find<Finish>(q.on_lost("gone", kExitFailure, false))->exit_code, kExitFailure);
  NodePolicy r = running();
  r.on_local_problem("bad interface", kExitConfigError);
  EXPECT_EQ(find<Finish>(r.on_lost("gone", kExitFailure, false))->exit_code, kExitConfigError);
}

TEST(NodePolicy, ALostMasterBeforeJoiningIsAConfigurationError) {
  NodePolicy p(settings());
  Decisions d = p.on_lost("connection refused", kExitFailure, false);
  EXPECT_NE(logs(d).find("could not join the job at the master node0:29500 — connection refused"), std::string::npos);
  EXPECT_EQ(find<Finish>(d)->exit_code, kExitConfigError);
}

TEST(NodePolicy, ASpareThatLosesTheMasterEndsWithTheGivenCode) {
  NodePolicy p(settings());
  p.on_standby("the job has its nodes");
  Decisions d = p.on_lost("heartbeat timeout", kExitFailure, false);
  EXPECT_NE(logs(d).find("while waiting as a hot spare"), std::string::npos);
  EXPECT_EQ(find<Finish>(d)->exit_code, kExitFailure);
}

TEST(NodePolicy, AJoiningLauncherKeptAsASpareWaitsOnce) {
  NodePolicy p(settings());
  Decisions d = p.on_standby("the job has its 2 nodes: this launcher is a hot spare");
  EXPECT_TRUE(find<WaitAsSpare>(d));
  EXPECT_NE(logs(d).find("this launcher is a hot spare (`ddplaunch status --master ...` lists the membership)"),
            std::string::npos);
  EXPECT_TRUE(p.spare());
  EXPECT_TRUE(p.on_standby("again").empty());
  NodePolicy joined = running();
  EXPECT_TRUE(joined.on_standby("too late").empty());
  EXPECT_FALSE(joined.spare());
}

TEST(NodePolicy, ASpareGivenASlotIsNoLongerASpare) {
  NodePolicy p(settings());
  p.on_standby("the job has its nodes");
  AssignmentFacts slot{Generation{2}, 1, 2, 8};
  Decisions d = p.on_assignment(slot);
  EXPECT_TRUE(find<TakeAssignment>(d));
  EXPECT_TRUE(find<StartWorkers>(d));
  EXPECT_NE(logs(d).find("this hot spare takes the place of node 1 in generation 2 (2 node(s), world size 8)"),
            std::string::npos)
      << logs(d);
  EXPECT_FALSE(p.spare());
  // Its next assignment (after a restart) says nothing of spares.
  p.on_restart_order(Generation{3}, "why", false);
  d = p.on_assignment(AssignmentFacts{Generation{3}, 1, 2, 8});
  EXPECT_TRUE(find<StartWorkers>(d));
  EXPECT_EQ(logs(d), "");
}

TEST(NodePolicy, ARefusalWhileJoiningEndsWithTwoAndAfterJoiningIsADismissal) {
  NodePolicy joining(settings());
  Decisions d = joining.on_refused("wrong job id", false);
  EXPECT_NE(logs(d).find("the master refused this node: wrong job id"), std::string::npos);
  EXPECT_EQ(find<Finish>(d)->exit_code, kExitConfigError);

  NodePolicy joined = running();
  d = joined.on_refused("excluded: every init failed", true);
  EXPECT_NE(logs(d).find("the master dismissed this node: excluded: every init failed"), std::string::npos);
  EXPECT_TRUE(find<StopWorkers>(d));
  EXPECT_EQ(find<Finish>(joined.on_workers_stopped())->exit_code, kExitConfigError);

  NodePolicy spare(settings());
  spare.on_standby("the job has its nodes");
  EXPECT_NE(logs(spare.on_refused("not needed", false)).find("dismissed"), std::string::npos);
  EXPECT_TRUE(spare.finished());
}

TEST(NodePolicy, TheMastersOwnRefusalIsSaidAsItIs) {
  NodePolicy p(settings(true));
  Decisions d = p.on_refused("node 1 has NCCL 2.18, node 0 2.21", false);
  EXPECT_EQ(logs(d).find("the master refused"), std::string::npos);
  EXPECT_NE(logs(d).find("node 1 has NCCL 2.18"), std::string::npos);
  EXPECT_EQ(find<Finish>(d)->exit_code, kExitConfigError);
}

TEST(NodePolicy, AMasterThatNeverAnswersIsGivenUpAfterThreeProbes) {
  NodePolicy p(settings());
  EXPECT_EQ(count<Finish>(p.on_join_probe(JoinProbe::Unanswered, "timed out", 2)), 0);
  EXPECT_EQ(count<Finish>(p.on_join_probe(JoinProbe::LocalError, "EMFILE", 2)), 0);  // not counted
  EXPECT_EQ(count<Finish>(p.on_join_probe(JoinProbe::Unanswered, "timed out", 2)), 0);
  Decisions d = p.on_join_probe(JoinProbe::Unanswered, "timed out", 2);
  EXPECT_EQ(find<Finish>(d)->exit_code, kExitConfigError);
  EXPECT_NE(logs(d).find("giving up: the master node0 (10.0.0.1:29500) has not answered TCP"), std::string::npos);
}

TEST(NodePolicy, AnAnswerOrAConnectionResetsTheProbeCount) {
  NodePolicy p(settings());
  p.on_join_probe(JoinProbe::Unanswered, "timed out", 2);
  p.on_join_probe(JoinProbe::Unanswered, "timed out", 2);
  EXPECT_EQ(logs(p.on_join_probe(JoinProbe::Answered, "", 2)), "");
  p.on_join_probe(JoinProbe::Unanswered, "timed out", 2);
  p.on_join_probe(JoinProbe::Unanswered, "timed out", 2);
  EXPECT_TRUE(p.on_join_probe(JoinProbe::Connected, "", 2).empty());
  EXPECT_EQ(count<Finish>(p.on_join_probe(JoinProbe::Unanswered, "timed out", 2)), 0);
  EXPECT_FALSE(p.finished());
}

TEST(NodePolicy, RefusedProbesOfALoopbackMasterAreTheClassicMistake) {
  NodePolicySettings s = settings();
  s.master_ip = "127.0.0.1";
  s.master_is_loopback = true;
  NodePolicy p(s);
  p.on_join_probe(JoinProbe::Refused, "refused", 2);
  p.on_join_probe(JoinProbe::Refused, "refused", 2);
  Decisions d = p.on_join_probe(JoinProbe::Refused, "refused", 2);
  EXPECT_EQ(find<Finish>(d)->exit_code, kExitConfigError);
  EXPECT_NE(logs(d).find("the classic MASTER_ADDR=127.0.0.1 mistake"), std::string::npos);
  // Refused is normal while node 0 starts when the master is another machine.
  NodePolicy remote(settings());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(count<Finish>(remote.on_join_probe(JoinProbe::Refused, "refused", 2)), 0);
}

TEST(NodePolicy, ProbesAfterJoiningDecideNothing) {
  NodePolicy p = running();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(p.on_join_probe(JoinProbe::Unanswered, "timed out", 2).empty());
}

// Node 0's rendezvous port: held by another process, it is tried again every second for 30 s
// (never past the join timeout), then the node ends with 2 saying what to do.
const PolicyClock::time_point t0{};
const std::string kTaken = "cannot host the rendezvous on port 29500: Address already in use (EADDRINUSE: ...)";

TEST(NodePolicy, AHostingPortThatStaysTakenIsRetriedForThirtySecondsThenEndsWithTwoSayingWhatToDo) {
  NodePolicy p(settings(true));
  Decisions d = p.on_hosting_attempt(HostingOutcome::PortTaken, kTaken, t0);
  EXPECT_NE(logs(d).find("retrying every second for up to 30 s"), std::string::npos) << logs(d);
  ASSERT_TRUE(find<RetryHosting>(d));
  EXPECT_EQ(find<RetryHosting>(d)->after_s, NodePolicy::kHostingRetryPauseS);
  d = p.on_hosting_attempt(HostingOutcome::PortTaken, kTaken, t0 + std::chrono::milliseconds(29900));
  EXPECT_TRUE(find<RetryHosting>(d));
  EXPECT_TRUE(logs(d).empty()) << "said once, not at every retry: " << logs(d);
  EXPECT_FALSE(p.finished());
  d = p.on_hosting_attempt(HostingOutcome::PortTaken, kTaken, t0 + std::chrono::seconds(30));
  EXPECT_FALSE(find<RetryHosting>(d));
  EXPECT_NE(logs(d).find("still held after the retries"), std::string::npos);
  ASSERT_TRUE(find<Finish>(d));
  EXPECT_EQ(find<Finish>(d)->exit_code, kExitConfigError);
}

TEST(NodePolicy, AHostingPortFreedDuringTheRetriesIsHostedAndSaysSo) {
  NodePolicy p(settings(true));
  p.on_hosting_attempt(HostingOutcome::PortTaken, kTaken, t0);
  Decisions d = p.on_hosting_attempt(HostingOutcome::Listening, "", t0 + std::chrono::seconds(4));
  ASSERT_TRUE(find<JoinRendezvous>(d));
  EXPECT_FALSE(find<JoinRendezvous>(d)->as_node);
  EXPECT_NE(logs(d).find("the rendezvous port 29500 is free now"), std::string::npos);
  EXPECT_TRUE(p.host_server());
}

TEST(NodePolicy, TheHostingRetriesNeverOutlastTheJoinTimeout) {
  NodePolicySettings s = settings(true);
  s.join_timeout_s = 5;
  NodePolicy p(s);
  Decisions d = p.on_hosting_attempt(HostingOutcome::PortTaken, kTaken, t0);
  EXPECT_NE(logs(d).find("for up to 5.0 s"), std::string::npos) << logs(d);
  EXPECT_TRUE(find<RetryHosting>(p.on_hosting_attempt(HostingOutcome::PortTaken, kTaken, t0 + std::chrono::seconds(4))));
  EXPECT_TRUE(find<Finish>(p.on_hosting_attempt(HostingOutcome::PortTaken, kTaken, t0 + std::chrono::seconds(5))));
}

// Two launchers of one job on one machine with the same torchrun line (no --node-rank): the
// first hosts; the second finds the port taken and joins it as a node, hosting nothing.
TEST(NodePolicy, WithoutANodeRankATakenPortIsAnotherLauncherOfTheJobAndThisOneJoinsItAsANode) {
  NodePolicySettings s = settings(true);
  s.host_chosen_by_address = true;
  NodePolicy p(s);
  Decisions d = p.on_hosting_attempt(HostingOutcome::PortTaken, kTaken, t0);
  ASSERT_TRUE(find<JoinRendezvous>(d));
  EXPECT_TRUE(find<JoinRendezvous>(d)->as_node);
  EXPECT_FALSE(find<RetryHosting>(d));
  EXPECT_NE(logs(d).find("already hosted on this machine"), std::string::npos);
  EXPECT_FALSE(p.host_server());
  // As a node, a stop order names the master (which it is not).
  take_and_start(p, Generation{0});
  EXPECT_NE(logs(p.on_stop_order(Generation{0}, "rank 1 failed", true)).find("master stopped the job: rank 1 failed"),
            std::string::npos);
}

TEST(NodePolicy, AHostingErrorOtherThanATakenPortEndsWithTwoAtOnce) {
  NodePolicy p(settings(true));
  p.on_hosting_attempt(HostingOutcome::PortTaken, kTaken, t0);
  Decisions d = p.on_hosting_attempt(HostingOutcome::Failed, "cannot host the rendezvous on port 29500: EACCES",
                                     t0 + std::chrono::seconds(1));
  EXPECT_NE(logs(d).find("EACCES"), std::string::npos);
  EXPECT_EQ(logs(d).find("still held"), std::string::npos);
  EXPECT_EQ(find<Finish>(d)->exit_code, kExitConfigError);
}

// etcd: the elected launcher hosts the coordinator, so a stop order is its own (no "master
// stopped the job" about itself); once it lost its coordinator it is a node again.
TEST(NodePolicy, AnElectedLauncherIsTheMasterUntilItLosesItsCoordinator) {
  NodePolicySettings s = settings(false);
  s.coordinator_wait_s = 40;
  NodePolicy p(s);
  EXPECT_FALSE(p.host_server());
  EXPECT_TRUE(find<HostCoordinator>(p.on_elected()));
  EXPECT_TRUE(p.host_server());
  take_and_start(p, Generation{0});
  EXPECT_EQ(logs(p.on_stop_order(Generation{0}, "rank 1 failed", true)).find("master stopped the job"), std::string::npos);
  NodePolicy q(s);
  q.on_elected();
  take_and_start(q, Generation{0});
  q.on_coordinator_lost("its lease expired", true);
  EXPECT_FALSE(q.host_server());
}

TEST(NodePolicy, AnEtcdThatCannotBeUsedAtAllEndsTheLauncherWithTwo) {
  NodePolicy p(settings());
  Decisions d = p.on_coordinator_store_unusable("etcd at 198.18.0.9:2379: connection refused");
  EXPECT_NE(logs(d).find("connection refused"), std::string::npos);
  ASSERT_TRUE(find<Finish>(d));
  EXPECT_EQ(find<Finish>(d)->exit_code, kExitConfigError);
  EXPECT_TRUE(p.on_coordinator_store_unusable("again").empty());
}

// etcd: the coordinator may move. A lost one stops the workers, then the node
// joins the coordinator etcd names next, within a bounded wait; its own lease lost ends it.
NodePolicySettings moving_coordinator() {
  NodePolicySettings s = settings();
  s.coordinator_wait_s = 40;
  return s;
}

TEST(NodePolicy, ALostCoordinatorStopsTheWorkersThenJoinsTheNextOneWithinTheWait) {
  NodePolicy p = running(Generation{3}, moving_coordinator());
  Decisions d = p.on_coordinator_lost("connection closed", true);
  ASSERT_TRUE(find<StopWorkers>(d));
  const auto* wait = find<ArmCoordinatorWait>(d);
  ASSERT_TRUE(wait);
  EXPECT_EQ(wait->seconds, 40);
  EXPECT_FALSE(find<Finish>(d));
  EXPECT_NE(logs(d).find("lost the coordinator (connection closed)"), std::string::npos) << logs(d);
  EXPECT_EQ(p.state(), NodeState::Stopping);
  Decisions stopped = p.on_workers_stopped();
  EXPECT_TRUE(find<JoinCoordinator>(stopped));
  EXPECT_EQ(p.state(), NodeState::Joining);
  take_and_start(p, Generation{4});  // the new coordinator's generation
  EXPECT_TRUE(p.on_coordinator_wait_over(wait->serial).empty());  // joined in time: a stale timer
  EXPECT_EQ(p.state(), NodeState::Running);
}

TEST(NodePolicy, NoCoordinatorWithinTheWaitEndsTheNode) {
  NodePolicy p = running(Generation{0}, moving_coordinator());
  Decisions d = p.on_coordinator_lost("connection reset", false);  // nothing to stop: joins at once
  EXPECT_TRUE(find<JoinCoordinator>(d));
  const auto* wait = find<ArmCoordinatorWait>(d);
  ASSERT_TRUE(wait);
  Decisions over = p.on_coordinator_wait_over(wait->serial);
  ASSERT_TRUE(find<Finish>(over));
  EXPECT_EQ(find<Finish>(over)->exit_code, kExitFailure);
  EXPECT_NE(logs(over).find("no coordinator took over"), std::string::npos) << logs(over);
}

// A coordinator that stays away: every failed join is the same loss. The wait armed at the
// loss is never re-armed (so it ends the node), the joins pause longer each time, and the
// same address failing again is not said again.
TEST(NodePolicy, FailedJoinsAfterALossKeepTheFirstWaitAndPauseLongerEachTime) {
  NodePolicy p = running(Generation{1}, moving_coordinator());
  Decisions first = p.on_coordinator_lost("connection reset", false, "10.0.0.7:29400");
  const auto* wait = find<ArmCoordinatorWait>(first);
  ASSERT_TRUE(wait);
  const int serial = wait->serial;
  ASSERT_TRUE(find<JoinCoordinator>(first));
  EXPECT_EQ(find<JoinCoordinator>(first)->after_s, 0);
  std::vector<double> pauses;
  std::string said;
  for (int i = 0; i < 6; ++i) {
    Decisions again = p.on_coordinator_lost("connection refused", false, "10.0.0.7:29400");
    EXPECT_FALSE(find<ArmCoordinatorWait>(again)) << "join " << i << " re-armed the wait";
    ASSERT_TRUE(find<JoinCoordinator>(again));
    pauses.push_back(find<JoinCoordinator>(again)->after_s);
    said += logs(again);
  }
  EXPECT_EQ(pauses, (std::vector<double>{1, 2, 4, 8, 8, 8}));
  EXPECT_EQ(said.find("cannot join the coordinator"), std::string::npos)
      << "the address of the loss failing again was said again: " << said;
  Decisions elsewhere = p.on_coordinator_lost("could not prove the rendezvous token", false, "10.0.0.9:29400");
  EXPECT_NE(logs(elsewhere).find("cannot join the coordinator at 10.0.0.9:29400 yet"), std::string::npos)
      << logs(elsewhere);
  EXPECT_TRUE(p.on_coordinator_lost("could not prove", false, "10.0.0.9:29400").size() == 1);  // only the join
  Decisions over = p.on_coordinator_wait_over(serial);
  ASSERT_TRUE(find<Finish>(over));
  EXPECT_EQ(find<Finish>(over)->exit_code, kExitFailure);
}

// Once a coordinator is joined, a later loss is a new one: a new wait, joins at once again.
TEST(NodePolicy, ALossAfterAJoinedCoordinatorArmsAFreshWait) {
  NodePolicy p = running(Generation{1}, moving_coordinator());
  const int first = find<ArmCoordinatorWait>(p.on_coordinator_lost("reset", false, "a:1"))->serial;
  p.on_coordinator_lost("refused", false, "a:1");
  take_and_start(p, Generation{2});
  Decisions later = p.on_coordinator_lost("reset", false, "b:1");
  ASSERT_TRUE(find<ArmCoordinatorWait>(later));
  EXPECT_GT(find<ArmCoordinatorWait>(later)->serial, first);
  EXPECT_EQ(find<JoinCoordinator>(later)->after_s, 0);
  EXPECT_TRUE(p.on_coordinator_wait_over(first).empty());
}

// etcd: the first coordinator is awaited within the same bound; a node admitted (as a member
// or a hot spare) is past it, and an election that never yields one ends the node.
TEST(NodePolicy, TheFirstCoordinatorIsAwaitedWithinTheWait) {
  NodePolicy never(moving_coordinator());
  Decisions armed = never.await_first_coordinator();
  ASSERT_TRUE(find<ArmCoordinatorWait>(armed));
  Decisions over = never.on_coordinator_wait_over(find<ArmCoordinatorWait>(armed)->serial);
  ASSERT_TRUE(find<Finish>(over));
  EXPECT_NE(logs(over).find("no coordinator was elected within 40 s"), std::string::npos) << logs(over);

  NodePolicy spare(moving_coordinator());
  const int serial = find<ArmCoordinatorWait>(spare.await_first_coordinator())->serial;
  spare.on_standby("the job has its nodes");
  EXPECT_TRUE(spare.on_coordinator_wait_over(serial).empty());

  NodePolicy member(moving_coordinator());
  const int member_serial = find<ArmCoordinatorWait>(member.await_first_coordinator())->serial;
  ASSERT_TRUE(find<TakeAssignment>(member.on_assignment(AssignmentFacts{Generation{0}})));
  EXPECT_TRUE(member.on_coordinator_wait_over(member_serial).empty());
  EXPECT_TRUE(NodePolicy(settings()).await_first_coordinator().empty());  // no etcd: no wait
}

TEST(NodePolicy, ASpareWhoseCoordinatorIsLostJoinsTheNextOneAsALauncher) {
  NodePolicy p(moving_coordinator());
  ASSERT_TRUE(find<WaitAsSpare>(p.on_standby("the job has its nodes")));
  Decisions d = p.on_coordinator_lost("connection closed", false);
  EXPECT_TRUE(find<JoinCoordinator>(d));
  EXPECT_FALSE(p.spare());
  EXPECT_FALSE(find<Finish>(d));
}

TEST(NodePolicy, WithoutEtcdALostCoordinatorIsALostMaster) {
  NodePolicy p = running();
  Decisions d = p.on_coordinator_lost("connection closed", false);
  ASSERT_TRUE(find<Finish>(d));
  EXPECT_FALSE(find<JoinCoordinator>(d));
}

TEST(NodePolicy, ALostLeaseStopsTheWorkersAndEndsTheNode) {
  NodePolicy p = running(Generation{2}, moving_coordinator());
  Decisions d = p.on_seat_lost("this launcher's etcd lease is lost (etcd unreachable)", true);
  ASSERT_TRUE(find<StopWorkers>(d));
  EXPECT_NE(logs(d).find("may be the partitioned one"), std::string::npos) << logs(d);
  Decisions stopped = p.on_workers_stopped();
  ASSERT_TRUE(find<Finish>(stopped));
  EXPECT_EQ(find<Finish>(stopped)->exit_code, kExitFailure);
}

}  // namespace
}  // namespace ddplaunch
