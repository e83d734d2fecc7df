// Who may drive a rank's debugger, against real launchers: another local user (uid 65534,
// through setpriv) and a peer that proved nothing get nothing from a one-node job started
// without a token — no status, no transcript, no rank's output, no gdb — while the job's own
// user still inspects it unchanged; a port squatter that a tokenless node joined cannot attach
// gdb or type into a rank's pdb (the node relays no debugger to it and the rank goes on); a
// member node that proved the token still speaks only for its own ranks.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "wire/launcher_messages.h"
#include "ddplaunch/rendezvous/client.h"
#include "fake_job_coordinator.h"
#include "launcher_test_env.h"
#include "multi_node_job.h"
#include "netns_cluster.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
namespace rdzv = ddplaunch::rendezvous;
namespace messages = ddplaunch::messages;
using ddplaunch::Generation;
using fake_job_coordinator::FakeJobCoordinator;
using namespace std::chrono_literals;

namespace {

constexpr auto kBound = 60s;

// argv run as uid/gid 65534 (nobody): another local user.
std::vector<std::string> as_nobody(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
  return argv;
}

// A folder every user may write into (the attacker's loot would land there).
std::string shared_folder(const std::string& prefix) {
  std::string dir = dt::temp_dir(prefix);
  ::chmod(dir.c_str(), 01777);
  return dir;
}

bool exists(const std::string& path) { return std::filesystem::exists(path); }

struct Inspected {
  std::string job_id, master;
};

// "inspect: ddplaunch status|stacks|debug --job J   (on this node; elsewhere add --master M)"
std::optional<Inspected> inspect_line(const std::string& output) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex(R"(--job (\S+)\s+\(on this node; elsewhere add --master (\S+)\))")))
    return std::nullopt;
  return Inspected{m[1], m[2]};
}

class HostileDebugOrders : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to play another local user (setpriv --reuid=65534)";
    if (!exists("/usr/bin/setpriv")) GTEST_SKIP() << "setpriv (util-linux) is not installed";
  }
};

// The default launch (one node, no token, no --master): the port is in `ss -ltn` and the job id
// in `ps`, but another user learns nothing through them and runs nothing; the owner's
// `ddplaunch status` works as before, with or without --master.
TEST_F(HostileDebugOrders, AnotherLocalUserGetsNothingFromAOneNodeJobWithoutAToken) {
  const std::string loot = shared_folder("debug-orders-loot-");
  dt::BackgroundProcess job;
  ASSERT_TRUE(job.start({DDPLAUNCH_BIN, "--nproc-per-node", "1", "--history-file", "off", "--grace", "1", "--",
                         FAKE_WORKER_BIN, "--report-init", "--sleep-ms", "20000", "--exit", "0"},
                        {}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(job.wait_for_output("inspect: ddplaunch status", kBound)) << job.output_so_far();
  const std::optional<Inspected> target = inspect_line(job.output_so_far());
  ASSERT_TRUE(target) << job.output_so_far();
  ASSERT_TRUE(job.wait_for_output("all 1 ranks finished init", kBound)) << job.output_so_far();

  // The attacker at `ddplaunch debug`: gdb on rank 0 and a shell command through it.
  const std::string shell_loot = loot + "/gdb-shell-id";
  dt::RunResult debug = dt::run_command(
      as_nobody({"sh", "-c",
                 "(echo ':attach 0 --gdb'; sleep 3; echo 'shell id > " + shell_loot + "'; sleep 2) | timeout 10 \"$0\" "
                 "debug --master " + target->master + " --job " + target->job_id,
                 DDPLAUNCH_BIN}),
      kBound);
  EXPECT_NE(debug.exit_code, 0) << debug.output;
  EXPECT_NE(debug.output.find("refused"), std::string::npos) << debug.output;

  // The attacker's status and tail: refused before anything about the job.
  dt::RunResult status = dt::run_command(
      as_nobody({DDPLAUNCH_BIN, "status", "--master", target->master, "--job-id", target->job_id}), kBound);
  EXPECT_NE(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("refused"), std::string::npos) << status.output;
  EXPECT_EQ(status.output.find("fake_worker"), std::string::npos) << status.output;
  dt::RunResult tail = dt::run_command(
      as_nobody({"timeout", "5", DDPLAUNCH_BIN, "tail", "--rank", "0", "--master", target->master, "--job-id",
                 target->job_id}),
      kBound);
  EXPECT_NE(tail.exit_code, 0) << tail.output;
  EXPECT_NE(tail.output.find("refused"), std::string::npos) << tail.output;

  // The same from a peer on the network that knows the port and job id but no token.
  rdzv::QueryFailure failure;
  const auto colon = target->master.rfind(':');
  const std::string host = target->master.substr(0, colon);
  const auto port = static_cast<std::uint16_t>(std::stoi(target->master.substr(colon + 1)));
  for (const std::string query : {"debug line :attach 0 --gdb", "debug poll 0", "timeline json"}) {
    const std::string answer = rdzv::query_master(host, port, target->job_id, "", query, 10s, failure);
    EXPECT_EQ(failure.kind, rdzv::QueryFailure::Kind::Refused) << query << ": " << failure.text << " / " << answer;
    EXPECT_EQ(answer, "") << query;
  }

  // The job's own user, on its node: found by the record, and with --master the record's token.
  dt::RunResult own = dt::run_command({DDPLAUNCH_BIN, "status", "--job-id", target->job_id}, kBound, {},
                                      dt::kLauncherEnvToUnset);
  EXPECT_EQ(own.exit_code, 0) << own.output;
  EXPECT_NE(own.output.find(target->job_id), std::string::npos) << own.output;
  dt::RunResult own_with_master = dt::run_command(
      {DDPLAUNCH_BIN, "status", "--master", target->master, "--job-id", target->job_id}, kBound, {},
      dt::kLauncherEnvToUnset);
  EXPECT_EQ(own_with_master.exit_code, 0) << own_with_master.output;

  dt::RunResult ended = job.wait(kBound);
  EXPECT_EQ(ended.exit_code, 0) << ended.output;
  EXPECT_FALSE(exists(shell_loot)) << "gdb ran the attacker's shell command";
  EXPECT_EQ(ended.output.find("gdb"), std::string::npos) << ended.output;
  std::filesystem::remove_all(loot);
}

// The same over the network: a one-node job whose --master is a routable address (real hosts
// built from network namespaces); a host outside the job knows the port and the job id (its
// default, ddplaunch@MASTER) and gets nothing, while the job's user on its node does.
TEST_F(HostileDebugOrders, AHostOutsideAOneNodeJobWithARoutableMasterGetsNothing) {
  if (auto why = dt::NetnsCluster::skip_reason(); !why.empty()) GTEST_SKIP() << why;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("dbo"), 2);
  const std::string master = cluster.address(1) + ":29400", job_id = "ddplaunch@" + master;
  dt::BackgroundProcess job;
  ASSERT_TRUE(job.start(cluster.exec_argv(1, {DDPLAUNCH_BIN, "--nodes", "1", "--master", master, "--history-file",
                                              "off", "--grace", "1", "--", FAKE_WORKER_BIN, "--report-init",
                                              "--sleep-ms", "8000", "--exit", "0"}),
                        {}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(job.wait_for_output("all 1 ranks finished init", kBound)) << job.output_so_far();
  EXPECT_EQ(job.output_so_far().find("no rendezvous token"), std::string::npos) << job.output_so_far();
  const std::string loot = shared_folder("debug-orders-net-"), shell_loot = loot + "/net-gdb-id";
  // The hosts share this machine's one /tmp, where root's job records are: the outsider runs as
  // another user, as it would be on a real other host (no record of the job, no token).
  dt::RunResult status = dt::run_command(
      cluster.exec_argv(2, as_nobody({DDPLAUNCH_BIN, "status", "--master", master, "--job-id", job_id})), kBound, {},
      dt::kLauncherEnvToUnset);
  EXPECT_NE(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("refused"), std::string::npos) << status.output;
  dt::RunResult debug = dt::run_command(
      cluster.exec_argv(2, as_nobody({"sh", "-c",
                                      "printf ':attach 0 --gdb\\nshell id > " + shell_loot + "\\n' | \"$0\" debug "
                                      "--master " + master + " --job " + job_id,
                                      DDPLAUNCH_BIN})),
      kBound, {}, dt::kLauncherEnvToUnset);
  EXPECT_NE(debug.exit_code, 0) << debug.output;
  EXPECT_NE(debug.output.find("refused"), std::string::npos) << debug.output;
  dt::RunResult ended = job.wait(kBound);
  EXPECT_EQ(ended.exit_code, 0) << ended.output;
  EXPECT_FALSE(exists(shell_loot)) << "gdb ran a shell command for a host outside the job";
  std::filesystem::remove_all(loot);
}

// ddplaunch as node rank 1 of a tokenless 2-node job whose --master port a squatter holds
// (here: a rendezvous server the test scripts, which proves nothing because there is nothing
// to prove).
std::unique_ptr<dt::BackgroundProcess> node_of_squatter(const FakeJobCoordinator& squatter,
                                                        const std::vector<std::string>& program,
                                                        const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> argv{DDPLAUNCH_BIN, "--nodes", "2", "--node-rank", "1", "--nproc-per-node", "1",
                                "--master", squatter.master(), "--job-id", "fake-master", "--grace", "1",
                                "--no-peer-probe", "--history-file", "off", "--"};
  argv.insert(argv.end(), program.begin(), program.end());
  auto node = std::make_unique<dt::BackgroundProcess>();
  EXPECT_TRUE(node->start(argv, env, dt::kLauncherEnvToUnset));
  return node;
}

// gdb on the node's rank, then a shell command typed into it: the order is refused, nothing runs.
TEST_F(HostileDebugOrders, ASquatterMasterCannotAttachGdbToATokenlessNodesRank) {
  if (!exists("/usr/bin/gdb")) GTEST_SKIP() << "gdb is not installed: the attack needs it";
  const std::string loot = shared_folder("debug-orders-squat-");
  FakeJobCoordinator squatter({});
  auto node = node_of_squatter(squatter, {FAKE_WORKER_BIN, "--report-init", "--sleep-ms", "30000", "--exit", "0"});
  squatter.join_helper_node();
  ASSERT_TRUE(squatter.next(messages::Kind::RankStates)) << node->output_so_far();
  const std::string shell_loot = loot + "/squatter-gdb-id";
  for (int rank = 0; rank < 2; ++rank) squatter.broadcast(messages::encode(Generation{0}, messages::DebugAttachGdb{rank}));
  ASSERT_TRUE(node->wait_for_output("refused an order to attach gdb", 20s)) << node->output_so_far();
  for (int rank = 0; rank < 2; ++rank)
    squatter.broadcast(messages::encode(Generation{0}, messages::DebugInput{rank, "shell id > " + shell_loot}));
  ASSERT_TRUE(node->wait_for_output("refused a line for a debugger", 20s)) << node->output_so_far();
  EXPECT_FALSE(squatter.next(messages::Kind::DebugStopped, 2s)) << "the node attached gdb for the squatter";
  EXPECT_FALSE(exists(shell_loot)) << "the squatter ran a shell command on the node";
  squatter.broadcast(messages::encode(Generation{0}, messages::JobEnd{0}));
  dt::RunResult r = node->wait(kBound);
  EXPECT_FALSE(r.timed_out) << r.output;
  std::filesystem::remove_all(loot);
}

// A Python rank's breakpoint() on a tokenless node: nothing of the debugger reaches the
// squatter, a line it sends is refused, and the rank goes on (said once at the node's log).
TEST_F(HostileDebugOrders, ATokenlessNodeRelaysNoPdbToItsMasterAndTheRankContinues) {
  if (!exists(PYTHON_WITH_TORCH)) GTEST_SKIP() << PYTHON_WITH_TORCH << " is not installed";
  const std::string loot = shared_folder("debug-orders-pdb-");
  const std::string went_on = loot + "/went-on", shell_loot = loot + "/pdb-os-system";
  const std::string script = "secret = 'do-not-relay-7731'\nbreakpoint()\nopen('" + went_on + "', 'w').write('yes')\n";
  FakeJobCoordinator squatter({});
  auto node = node_of_squatter(squatter, {PYTHON_WITH_TORCH, "-c", script});
  squatter.join_helper_node();
  ASSERT_TRUE(node->wait_for_output("takes no debugger orders from its master", kBound)) << node->output_so_far();
  squatter.broadcast(messages::encode(
      Generation{0}, messages::DebugInput{1, "import os; os.system('id > " + shell_loot + "')"}));
  for (int i = 0; i < 600 && !exists(went_on); ++i) std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(exists(went_on)) << "the rank did not go on after its breakpoint\n" << node->output_so_far();
  EXPECT_FALSE(exists(shell_loot)) << "the squatter's line reached the rank's pdb";
  // Everything the node sent so far (a debugger's output would follow its stop).
  EXPECT_FALSE(squatter.next(messages::Kind::DebugStopped, 1s)) << "the node relayed its rank's stop";
  squatter.broadcast(messages::encode(Generation{0}, messages::JobEnd{0}));
  dt::RunResult r = node->wait(kBound);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::filesystem::remove_all(loot);
}

// A node that proved the token (the test's own client, as node 1) claims node 0's rank 0 and
// a host that is not its own: the claim is ignored, and its own rank's stop shows the host it
// joined as, not the payload's.
TEST_F(HostileDebugOrders, AMemberNodeSpeaksOnlyForItsOwnRanksAndUnderItsOwnHost) {
  const std::string token = "hostile-debug-orders-member-token-93c1f0";
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "member-claims-" + std::to_string(::getpid()),
                                              {"--history-file", "off", "--no-peer-probe"});
  dt::BackgroundProcess master;
  ASSERT_TRUE(master.start(dt::node_argv(job, 0, 1, {}, {FAKE_WORKER_BIN, "--report-init", "--sleep-ms", "15000"}),
                           {{"DDPLAUNCH_TOKEN", token}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(dt::wait_listening(master)) << master.output_so_far();
  const dt::RunResult version = dt::run_command({DDPLAUNCH_BIN, "--version"}, 10s);
  std::string launcher_version = version.output.substr(version.output.find(' ') + 1);
  launcher_version.erase(launcher_version.find_last_not_of("\r\n") + 1);

  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::atomic<bool> assigned{false};
  rdzv::ClientOptions options;
  options.job_id = job.job_id;
  options.token = token;
  options.host = "127.0.0.1";
  options.port = static_cast<std::uint16_t>(job.port);
  rdzv::Client member(io, options,
                      rdzv::ClientCallbacks{
                          .on_assignment = [&](const rdzv::Assignment&) { assigned = true; },
                          .on_refused = [](const std::string& why) { ADD_FAILURE() << "refused: " << why; },
                          .on_message = [](const rdzv::Message&) {},
                          .on_lost = [](const std::string&) {},
                          .on_progress = nullptr,
                          .on_impostor = nullptr,
                      });
  rdzv::NodeFacts facts;
  facts.hostname = "member-host-1";
  facts.requested_node_rank = 1;
  facts.expected_nodes = 2;
  facts.nproc = 1;
  facts.launcher_version = launcher_version;
  std::thread loop([&] { io.run(); });
  boost::asio::post(io, [&] { member.join(facts); });
  for (int i = 0; i < 300 && !assigned; ++i) std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(assigned) << master.output_so_far();

  auto stop_of = [](int rank) {
    return messages::DebugStopped{rank, 0, 4242, "forged-host", "train.py", "step", "x = 1", "breakpoint", 7};
  };
  boost::asio::post(io, [&] {
    member.send(messages::encode(Generation{0}, stop_of(0)));  // node 0's rank
    member.send(messages::encode(Generation{0}, stop_of(1)));  // its own
  });
  EXPECT_TRUE(master.wait_for_output("sent a debugger message for rank 0, which is not one of its ranks", 20s))
      << master.output_so_far();
  std::string transcript;
  rdzv::QueryFailure failure;
  for (int i = 0; i < 100 && transcript.find("rank 1 (") == std::string::npos; ++i) {
    transcript = rdzv::query_master("127.0.0.1", static_cast<std::uint16_t>(job.port), job.job_id, token,
                                    "debug poll 0", 5s, failure);
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_NE(transcript.find("rank 1 (local 0, node 1, host member-host-1"), std::string::npos) << transcript;
  EXPECT_EQ(transcript.find("forged-host"), std::string::npos) << transcript;
  EXPECT_EQ(transcript.find("rank 0 (local 0, node 1"), std::string::npos) << transcript;

  boost::asio::post(io, [&] { member.close(); });
  work.reset();
  io.stop();
  loop.join();
  master.send_signal(SIGTERM);
  master.wait(kBound);
}

}  // namespace
