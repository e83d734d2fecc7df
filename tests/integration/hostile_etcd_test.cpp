// The etcd backend against what goes wrong around it, with real launchers on 127.0.0.1 and a
// real etcd the test starts: a coordinator lost while etcd is down, an impostor coordinator
// planted in etcd, the state a finished run leaves, a run id shared by two runs, and what the
// workers and `ps` can read. Skipped, saying why, where /usr/bin/etcd is not installed.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <iostream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "rendezvous/fake_rendezvous_master.h"
#include "etcd_cluster.h"
#include "multi_node_job.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
namespace dt = ddplaunch::testing;
using dt::BackgroundProcess;
using dt::EtcdCluster;
using dt::RunResult;

constexpr auto kJobBound = 90s;   // "finished, not hung", on a busy 2-core machine
constexpr auto kStepBound = 40s;  // one expected line of output

std::unique_ptr<BackgroundProcess> start_launcher(const dt::EtcdLauncher& launcher) {
  return dt::start_node(dt::etcd_launcher_argv(launcher));
}

dt::EtcdLauncher launcher_of(const EtcdCluster& etcd, const std::string& job_id, std::vector<std::string> flags,
                             std::vector<std::string> program) {
  return {.launcher = DDPLAUNCH_BIN, .endpoints = etcd.endpoints(), .job_id = job_id, .nodes = 2,
          .flags = std::move(flags), .program = std::move(program)};
}

// The coordinator's launcher dies while etcd is down: no launcher can be elected. The other
// ends once lease_ttl + join_timeout have passed since the loss (2 + 5 s here), whatever its
// joins meet meanwhile (before: each failed join re-armed the wait, and it never ended).
TEST(HostileEtcd, ALauncherThatLostItsCoordinatorWhileEtcdIsDownEndsWithinTheWait) {
  if (!EtcdCluster::available()) GTEST_SKIP() << dt::kNoEtcd;
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  const std::string job_id = "etcd-lost-" + std::to_string(getpid());
  const auto launcher = launcher_of(etcd, job_id, {"--join-timeout", "5"}, {FAKE_WORKER_BIN, "--sleep-ms", "600000"});
  auto first = start_launcher(launcher);
  ASSERT_TRUE(first->wait_for_output("elected the job's coordinator", kStepBound)) << first->output_so_far();
  auto second = start_launcher(launcher);
  ASSERT_TRUE(first->wait_for_output("generation 0: 2 node(s)", kStepBound)) << first->output_so_far();
  etcd.kill(0);
  ASSERT_TRUE(first->send_signal(SIGKILL));
  first->wait(10s);
  RunResult survivor = second->wait(60s);
  EXPECT_FALSE(survivor.timed_out) << "the launcher never ended\n" << survivor.output;
  EXPECT_EQ(survivor.exit_code, 1) << survivor.output;
  EXPECT_NE(survivor.output.find("lost the coordinator"), std::string::npos) << survivor.output;
  EXPECT_NE(survivor.output.find("no coordinator took over within 7.0 s"), std::string::npos) << survivor.output;
}

// A real etcd, and an impostor's address put under the job's election before any launcher
// starts (no lease, the lowest revision: etcd names it the coordinator). The impostor greets
// each connection and closes it without proving anything.
struct PlantedCoordinator {
  explicit PlantedCoordinator(const std::string& job_prefix) : job_id(job_prefix + std::to_string(getpid())) {
    error = etcd.start(1);
    if (!error.empty()) return;
    RunResult put = dt::run_etcdctl(etcd.endpoints(), {"put", "/ddplaunch/" + job_id + "/coordinator/1",
                                                       "127.0.0.1:" + std::to_string(impostor.port())});
    if (put.exit_code != 0) error = "etcdctl put: " + put.output;
  }
  EtcdCluster etcd;
  rdzv_test::FakeRendezvousMaster impostor{[](const rdzv_test::Frame&, const std::string&) { return std::vector<rdzv_test::Frame>{}; },
                                 /*every_connection=*/true};
  std::string job_id;
  std::string error;
};

// An impostor coordinator planted in etcd (lowest revision, so etcd names it) on a job without
// a token: it greets, then closes without proving anything. The launcher connects to it a few
// times, with a pause that grows, says so once, and ends within lease_ttl + 2 x join_timeout
// (before: 70,561 connections in 16 s, 35,249 log lines, RSS 44 -> 254 MB, and it never ended).
// Every launcher says that without a token etcd's writers control the job.
TEST(HostileEtcd, AnImpostorCoordinatorPlantedInEtcdCostsAFewConnectionsAndTheLauncherEnds) {
  if (!EtcdCluster::available()) GTEST_SKIP() << dt::kNoEtcd;
  PlantedCoordinator planted("etcd-impostor-");
  ASSERT_EQ(planted.error, "");
  const EtcdCluster& etcd = planted.etcd;
  const std::string& job_id = planted.job_id;
  const rdzv_test::FakeRendezvousMaster& impostor = planted.impostor;
  RunResult r = dt::run_command(
      dt::etcd_launcher_argv(launcher_of(etcd, job_id, {"--join-timeout", "5"}, {FAKE_WORKER_BIN})), kJobBound);
  EXPECT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("closed the connection without proving"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no coordinator was elected within 7.0 s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("anyone who can write under /ddplaunch/" + job_id + "/ in etcd"), std::string::npos)
      << r.output;
  EXPECT_LT(r.seconds, 30) << r.output;
  std::cout << "impostor coordinator: " << impostor.connections() << " connection(s), " << dt::count_of(r.output, "\n")
            << " log line(s), launcher ended after " << r.seconds << " s\n";
  EXPECT_GE(impostor.connections(), 2);
  EXPECT_LE(impostor.connections(), 15) << r.output;
  EXPECT_LE(dt::count_of(r.output, "closed the connection without proving"), 4) << r.output;
  EXPECT_LT(r.output.size(), 20000u) << r.output;
}

// With a token, a coordinator address not sealed with it is not followed at all: nothing
// connects to it, the launcher says why, and ends within the wait (before: workers were sent
// to the planted MASTER_ADDR, and the job ended "succeeded").
TEST(HostileEtcd, ACoordinatorAddressPlantedWithoutTheTokenIsNotFollowed) {
  if (!EtcdCluster::available()) GTEST_SKIP() << dt::kNoEtcd;
  PlantedCoordinator planted("etcd-unsealed-");
  ASSERT_EQ(planted.error, "");
  const EtcdCluster& etcd = planted.etcd;
  const std::string& job_id = planted.job_id;
  const rdzv_test::FakeRendezvousMaster& impostor = planted.impostor;
  RunResult r = dt::run_command(dt::etcd_launcher_argv(launcher_of(
                                    etcd, job_id, {"--join-timeout", "5", "--token", "etcd-unsealed-token-0123456789"},
                                    {FAKE_WORKER_BIN, "--print-env"})),
                                kJobBound);
  EXPECT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("whose address is not sealed with this job's token"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no coordinator was elected within 7.0 s"), std::string::npos) << r.output;
  EXPECT_EQ(dt::count_of(r.output, "not sealed with this job's token"), 1) << r.output;
  EXPECT_EQ(impostor.connections(), 0);
  EXPECT_EQ(r.output.find("MASTER_ADDR="), std::string::npos) << "a worker started:\n" << r.output;
}

// Both launchers of a 2-node etcd job, to the end.
std::vector<RunResult> run_two_launchers(const dt::EtcdLauncher& launcher) {
  std::vector<std::unique_ptr<BackgroundProcess>> launchers;
  for (int i = 0; i < 2; ++i) launchers.push_back(start_launcher(launcher));
  std::vector<RunResult> results;
  for (auto& l : launchers) results.push_back(l->wait(kJobBound));
  return results;
}

std::string both(const std::vector<RunResult>& results) {
  std::string out;
  for (std::size_t i = 0; i < results.size(); ++i)
    out += "===== launcher " + std::to_string(i) + "\n" + results[i].output;
  return out;
}

// etcd stalls (SIGSTOP) longer than the lease (2 s): at resume every lease has expired. The
// launchers register again with new leases, the sitting coordinator is elected again, and the
// running workers finish in generation 0 (before: both launchers exited 1, no worker finished).
TEST(HostileEtcd, AnEtcdStallLongerThanTheLeaseKeepsAHealthyJob) {
  if (!EtcdCluster::available()) GTEST_SKIP() << dt::kNoEtcd;
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  const std::string job_id = "etcd-stall-" + std::to_string(getpid());
  const auto launcher =
      launcher_of(etcd, job_id, {}, {"/bin/sh", "-c", "echo GENERATION=$DDPLAUNCH_GENERATION; sleep 14; echo FINISHED"});
  std::vector<std::unique_ptr<BackgroundProcess>> launchers;
  for (int i = 0; i < 2; ++i) launchers.push_back(start_launcher(launcher));
  bool started = false;  // either may be the coordinator: both watched, 400 x 100 ms at most
  for (int i = 0; i < 400 && !started; ++i)
    started = launchers[0]->wait_for_output("generation 0: 2 node(s)", 50ms) ||
              launchers[1]->wait_for_output("generation 0: 2 node(s)", 50ms);
  ASSERT_TRUE(started) << launchers[0]->output_so_far() << launchers[1]->output_so_far();
  ASSERT_TRUE(etcd.signal(0, SIGSTOP));
  std::this_thread::sleep_for(5s);
  ASSERT_TRUE(etcd.signal(0, SIGCONT));
  std::vector<RunResult> results;
  for (auto& l : launchers) results.push_back(l->wait(kJobBound));
  const std::string all = both(results);
  for (const auto& r : results) {
    EXPECT_EQ(r.exit_code, 0) << all;
    EXPECT_NE(r.output.find("FINISHED"), std::string::npos) << all;
    EXPECT_EQ(r.output.find("GENERATION=1"), std::string::npos) << all;
  }
  EXPECT_EQ(dt::count_of(all, "registering again with a new lease"), 2) << all;
  EXPECT_EQ(dt::count_of(all, "elected the job's coordinator again"), 1) << all;
  EXPECT_EQ(all.find("took over"), std::string::npos) << all;
}

// A run that ended removes its state from etcd; the next run under the same id starts at
// generation 0 with its whole restart budget (before: the state stayed, and the next run
// "took over" after generation 1 with a restart it never spent, or never started when the
// last phase saved was ended).
TEST(HostileEtcd, AFinishedRunLeavesNoStateAndTheSameIdStartsAfresh) {
  if (!EtcdCluster::available()) GTEST_SKIP() << dt::kNoEtcd;
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  const std::string job_id = "etcd-twice-" + std::to_string(getpid());
  const auto launcher = launcher_of(etcd, job_id, {"--max-restarts", "1"}, {FAKE_WORKER_BIN, "--print-env"});
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    std::vector<RunResult> results = run_two_launchers(launcher);
    for (const auto& r : results) {
      EXPECT_EQ(r.exit_code, 0) << both(results);
      EXPECT_NE(r.output.find("TORCHELASTIC_RESTART_COUNT=0"), std::string::npos) << both(results);
      EXPECT_EQ(r.output.find("took over"), std::string::npos) << both(results);
      EXPECT_EQ(r.output.find("already ended"), std::string::npos) << both(results);
    }
    RunResult keys = dt::run_etcdctl(etcd.endpoints(), {"get", "--prefix", "--keys-only", "/ddplaunch/" + job_id + "/"});
    EXPECT_EQ(keys.exit_code, 0) << keys.output;
    EXPECT_EQ(keys.output.find("/ddplaunch/"), std::string::npos) << "left in etcd after the run:\n" << keys.output;
  }
}

// A run that crashed (every launcher SIGKILLed) leaves its state; the next run under the same
// id does not resume it: it says so and starts at generation 0 (before: it "took over as the
// job's coordinator after generation 0", its workers got DDPLAUNCH_GENERATION=1).
TEST(HostileEtcd, ACrashedRunsStateIsNotResumedByTheNextRun) {
  if (!EtcdCluster::available()) GTEST_SKIP() << dt::kNoEtcd;
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  const std::string job_id = "etcd-crashed-" + std::to_string(getpid());
  {
    auto crashed = launcher_of(etcd, job_id, {}, {FAKE_WORKER_BIN, "--sleep-ms", "600000"});
    auto first = start_launcher(crashed);
    auto second = start_launcher(crashed);
    bool started = false;  // either may be the coordinator: both are watched, 400 x 100 ms at most
    for (int i = 0; i < 400 && !started; ++i)
      started = first->wait_for_output("generation 0: 2 node(s)", 50ms) ||
                second->wait_for_output("generation 0: 2 node(s)", 50ms);
    ASSERT_TRUE(started) << first->output_so_far() << second->output_so_far();
    std::this_thread::sleep_for(1500ms);  // the state is saved after the decision
    first->send_signal(SIGKILL);
    second->send_signal(SIGKILL);
    first->wait(10s);
    second->wait(10s);
  }
  RunResult state = dt::run_etcdctl(etcd.endpoints(), {"get", "--print-value-only", "/ddplaunch/" + job_id + "/state"});
  ASSERT_NE(state.output.find("\"run\""), std::string::npos) << "the crashed run saved no state:\n" << state.output;
  std::this_thread::sleep_for(3s);  // its leases (2 s) expire: the election is free

  std::vector<RunResult> results =
      run_two_launchers(launcher_of(etcd, job_id, {}, {FAKE_WORKER_BIN, "--print-env"}));
  std::string all = both(results);
  EXPECT_NE(all.find("etcd holds the state of another run under /ddplaunch/" + job_id + "/state"), std::string::npos)
      << all;
  EXPECT_EQ(all.find("took over"), std::string::npos) << all;
  for (const auto& r : results) {
    EXPECT_EQ(r.exit_code, 0) << all;
    EXPECT_NE(r.output.find("DDPLAUNCH_GENERATION=0"), std::string::npos) << all;
  }
}

// Which of `launchers` said `text` first (all watched, 400 x 50 ms at most), or -1.
int which_says(const std::vector<std::unique_ptr<BackgroundProcess>>& launchers, const std::string& text) {
  for (int round = 0; round < 400; ++round)
    for (std::size_t i = 0; i < launchers.size(); ++i)
      if (launchers[i]->wait_for_output(text, 50ms / launchers.size())) return static_cast<int>(i);
  return -1;
}

// With a token, garbage planted as the job's state while it runs (etcd's writers without the
// token can do that) does not make the next coordinator start the job afresh at generation 0
// with full restart budgets: the launcher elected after the coordinator's loss refuses to
// coordinate over it and its node ends saying why (before: "the job starts afresh", at every
// failover).
TEST(HostileEtcd, AGarbageStateOnATokenJobIsRefusedAtFailoverNotStartedAfresh) {
  if (!EtcdCluster::available()) GTEST_SKIP() << dt::kNoEtcd;
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  const std::string job_id = "etcd-garbage-" + std::to_string(getpid());
  const auto launcher = launcher_of(
      etcd, job_id, {"--join-timeout", "5", "--max-restarts", "3", "--token", "etcd-garbage-token-0123456789"},
      {"/bin/sh", "-c", "echo GENERATION=$DDPLAUNCH_GENERATION; exec sleep 600"});
  std::vector<std::unique_ptr<BackgroundProcess>> launchers;
  for (int i = 0; i < 2; ++i) launchers.push_back(start_launcher(launcher));
  const int coordinator = which_says(launchers, "elected the job's coordinator");
  ASSERT_GE(coordinator, 0) << launchers[0]->output_so_far() << launchers[1]->output_so_far();
  ASSERT_TRUE(launchers[coordinator]->wait_for_output("generation 0: 2 node(s)", kStepBound))
      << launchers[coordinator]->output_so_far();
  std::this_thread::sleep_for(1500ms);  // the state is saved after the decision
  RunResult put = dt::run_etcdctl(etcd.endpoints(), {"put", "/ddplaunch/" + job_id + "/state", "garbage {not a state"});
  ASSERT_EQ(put.exit_code, 0) << put.output;
  ASSERT_TRUE(launchers[coordinator]->send_signal(SIGKILL));
  launchers[coordinator]->wait(10s);
  RunResult survivor = launchers[1 - coordinator]->wait(kJobBound);
  EXPECT_FALSE(survivor.timed_out) << survivor.output;
  EXPECT_NE(survivor.exit_code, 0) << survivor.output;
  EXPECT_NE(survivor.output.find("cannot trust"), std::string::npos) << survivor.output;
  EXPECT_NE(survivor.output.find("does not coordinate and the job ends here"), std::string::npos) << survivor.output;
  EXPECT_EQ(survivor.output.find("starts afresh"), std::string::npos) << survivor.output;
  EXPECT_EQ(dt::count_of(survivor.output, "GENERATION="), 1) << survivor.output;
}

// etcd stops answering (SIGSTOP) and a node's launcher is lost: the coordinator replaces it by
// the spare, but a new generation waits for etcd to confirm this coordinator still leads. It
// ends once join_timeout (8 s) has passed since that wait began, and its message names both
// that wait and how long etcd has been silent: the silence it names and the end measured from
// the stall agree (before: the end came 17 s after the stall, the message said 8 s).
TEST(HostileEtcd, ACoordinatorThatLostEtcdEndsWhenItsMessageSays) {
  if (!EtcdCluster::available()) GTEST_SKIP() << dt::kNoEtcd;
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  const std::string job_id = "etcd-silent-" + std::to_string(getpid());
  auto launcher = launcher_of(etcd, job_id, {"--join-timeout", "8"}, {FAKE_WORKER_BIN, "--sleep-ms", "600000"});
  launcher.nodes = 3;  // with a spare, 3 of the 4 launchers stay joined: not a minority (MinorityRule)
  launcher.spares = 1;
  std::vector<std::unique_ptr<BackgroundProcess>> launchers;
  for (int i = 0; i < 4; ++i) launchers.push_back(start_launcher(launcher));
  auto everything = [&] {
    std::string out;
    for (std::size_t i = 0; i < launchers.size(); ++i)
      out += "===== launcher " + std::to_string(i) + "\n" + launchers[i]->output_so_far();
    return out;
  };
  const int coordinator = which_says(launchers, "elected the job's coordinator");
  const int spare = which_says(launchers, "is a hot spare of this job");
  ASSERT_GE(coordinator, 0) << everything();
  ASSERT_GE(spare, 0) << everything();
  ASSERT_TRUE(launchers[coordinator]->wait_for_output("generation 0: 3 node(s)", kStepBound)) << everything();
  int victim = 0;
  while (victim == coordinator || victim == spare) ++victim;
  ASSERT_TRUE(etcd.signal(0, SIGSTOP));
  const auto stalled_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(launchers[victim]->send_signal(SIGKILL));
  RunResult ended = launchers[coordinator]->wait(kJobBound);
  const double ended_after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - stalled_at).count();
  etcd.signal(0, SIGCONT);
  EXPECT_FALSE(ended.timed_out) << ended.output;
  EXPECT_NE(ended.exit_code, 0) << ended.output;
  std::smatch waited, silent;
  ASSERT_TRUE(std::regex_search(ended.output, waited,
                                std::regex(R"(leadership for ([0-9.]+) s \(the limit is join_timeout\))")))
      << ended.output;
  ASSERT_TRUE(std::regex_search(ended.output, silent, std::regex(R"(keepalives for about ([0-9.]+) s)")))
      << ended.output;
  const double waited_s = std::stod(waited[1]), silent_s = std::stod(silent[1]);
  std::cout << "coordinator ended " << ended_after_s << " s after etcd stalled; it said: etcd silent for about "
            << silent_s << " s, the generation waited " << waited_s << " s\n";
  EXPECT_GE(waited_s, 8.0) << ended.output;
  EXPECT_LT(waited_s, 10.0) << ended.output;
  // Generous: the TTL's granularity, the workers' stop (--grace 1) and a busy machine.
  EXPECT_LT(std::abs(ended_after_s - silent_s), 5.0) << ended.output;
}

// The etcd password and the rendezvous token reach no worker: not in its environment, and not
// in the launcher's environment block that /proc/PPID/environ shows it (before: the password
// was in every worker's environment, and both in the launcher's /proc/PID/environ).
TEST(HostileEtcd, TheEtcdPasswordAndTheTokenReachNoWorker) {
  if (!EtcdCluster::available()) GTEST_SKIP() << dt::kNoEtcd;
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  ASSERT_EQ(etcd.enable_auth("pw-Secret-4711"), "");
  const std::string job_id = "etcd-secrets-" + std::to_string(getpid());
  dt::EtcdLauncher launcher = launcher_of(
      etcd, job_id, {},
      {"/bin/sh", "-c", "echo WORKER_ENV; env; echo PARENT_ENV; tr '\\0' '\\n' < /proc/$PPID/environ; echo END"});
  launcher.nodes = 1;
  launcher.conf = "username=root";
  BackgroundProcess node;
  ASSERT_TRUE(node.start(dt::etcd_launcher_argv(launcher), {{"DDPLAUNCH_ETCD_PASSWORD", "pw-Secret-4711"},
                                                            {"DDPLAUNCH_TOKEN", "tok-Secret-0815-abcdefgh"}}));
  RunResult r = node.wait(kJobBound);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("PARENT_ENV"), std::string::npos) << r.output;
  ASSERT_NE(r.output.find("DDPLAUNCH_ETCD_PASSWORD=*"), std::string::npos) << "the parent's block was not read\n"
                                                                           << r.output;
  EXPECT_EQ(r.output.find("pw-Secret-4711"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("tok-Secret-0815"), std::string::npos) << r.output;
}

// What every launcher checks before it starts: an etcd job needs its run's own id, and no id
// may be longer than the rendezvous and etcd keys hold (before: a 20,000-character id failed
// as "Connection reset by peer").
TEST(HostileEtcd, AnEtcdJobWithoutARunIdOrWithAnOversizedIdIsRefusedSayingWhy) {
  RunResult no_id = dt::run_command(
      dt::etcd_launcher_argv({.launcher = DDPLAUNCH_BIN, .endpoints = "127.0.0.1:1", .program = {FAKE_WORKER_BIN}}),
      30s);
  EXPECT_EQ(no_id.exit_code, 2) << no_id.output;
  EXPECT_NE(no_id.output.find("--rdzv-backend etcd needs --rdzv-id ID"), std::string::npos) << no_id.output;
  EXPECT_NE(no_id.output.find("new for each run"), std::string::npos) << no_id.output;
  const int port = dt::free_tcp_port();
  RunResult long_id = dt::run_command({DDPLAUNCH_BIN, "--nnodes", "2", "--node-rank", "1", "--master",
                                       "127.0.0.1:" + std::to_string(port), "--rdzv-id", std::string(20000, 'x'), "--",
                                       FAKE_WORKER_BIN},
                                      30s);
  EXPECT_EQ(long_id.exit_code, 2) << long_id.output.substr(0, 2000);
  EXPECT_NE(long_id.output.find("is 20000 characters long; at most 255"), std::string::npos)
      << long_id.output.substr(0, 2000);
  EXPECT_LT(long_id.seconds, 10);
}

}  // namespace
