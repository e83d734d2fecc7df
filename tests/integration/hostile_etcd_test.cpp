// The etcd backend against what goes wrong around it, with real launchers on 127.0.0.1 and a
// real etcd the test starts: a coordinator lost while etcd is down, an impostor coordinator
// planted in etcd, the state a finished run leaves, a run id shared by two runs, and what the
// workers and `ps` can read. Skipped, saying why, where /usr/bin/etcd is not installed.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../../rendezvous/testing/fake_master.h"
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

// A coordinator address planted in etcd (lowest revision, so etcd names it) that answers the
// greeting but cannot prove the token: the launcher connects to it a few times, with a pause
// that grows, says so once, and ends within lease_ttl + 2 x join_timeout (before: 70,561
// connections in 16 s, 35,249 log lines, RSS 44 -> 254 MB, and it never ended).
TEST(HostileEtcd, AnImpostorCoordinatorPlantedInEtcdCostsAFewConnectionsAndTheLauncherEnds) {
  if (!EtcdCluster::available()) GTEST_SKIP() << dt::kNoEtcd;
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  rdzv_test::FakeMaster impostor(
      [](const rdzv_test::Frame&, const std::string&) {
        rdzv_test::Frame welcome;
        welcome.kind = "welcome";
        welcome.fields["proof"] = std::string(64, '0');
        return std::vector<rdzv_test::Frame>{welcome};
      },
      /*every_connection=*/true);
  const std::string job_id = "etcd-impostor-" + std::to_string(getpid());
  RunResult planted = dt::run_etcdctl(etcd.endpoints(), {"put", "/ddplaunch/" + job_id + "/coordinator/1",
                                                         "127.0.0.1:" + std::to_string(impostor.port())});
  ASSERT_EQ(planted.exit_code, 0) << planted.output;
  RunResult r = dt::run_command(
      dt::etcd_launcher_argv(launcher_of(etcd, job_id, {"--join-timeout", "5", "--token", "etcd-impostor-token"},
                                         {FAKE_WORKER_BIN})),
      kJobBound);
  EXPECT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("could not prove the rendezvous token"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no coordinator took over"), std::string::npos) << r.output;
  EXPECT_LT(r.seconds, 30) << r.output;
  EXPECT_GE(impostor.connections(), 2);
  EXPECT_LE(impostor.connections(), 15) << r.output;
  EXPECT_LE(dt::count_of(r.output, "could not prove the rendezvous token"), 4) << r.output;
  EXPECT_LT(r.output.size(), 20000u) << r.output;
}

}  // namespace
