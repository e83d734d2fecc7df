// Hostile peers against a real master (real ddplaunch processes, real sockets): a relay that
// replays or alters a captured join, a fake master that cannot prove the token, peers without
// a node rank that try to end the job, where the master listens, and jobs over IPv6 ([::1] and
// netns hosts in 2001:2::/48). Each time the real job still starts and ends right.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rendezvous/fake_rendezvous_master.h"
#include "rendezvous/raw_peer.h"
#include "multi_node_job.h"
#include "netns_cluster.h"
#include "output_parsing.h"
#include "launcher_test_env.h"
#include "process_runner.h"
#include "rendezvous/tcp_relay.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono_literals;
using rdzv_test::FrameReader;
using rdzv_test::RawPeer;
using rdzv_test::Relay;

namespace {

constexpr auto kJobBound = 60s;

const std::vector<std::string>& kUnsetEnv = ddplaunch::testing::kLauncherEnvToUnset;

std::vector<std::string> fake_worker_node(const dt::MultiNodeJob& job, int node_rank,
                                          const std::vector<std::string>& node_flags,
                                          const std::vector<std::string>& worker_args) {
  std::vector<std::string> program{FAKE_WORKER_BIN};
  program.insert(program.end(), worker_args.begin(), worker_args.end());
  return dt::node_argv(job, node_rank, 1, node_flags, program);
}

// Reads frames from a RawPeer until `index` exists or 10 s pass (the master runs elsewhere).
std::optional<rdzv_test::Frame> read_frame(RawPeer& peer, std::size_t index) {
  for (int i = 0; i < 1000 && !peer.nth_frame(index) && !peer.closed_by_server; ++i) {
    std::this_thread::sleep_for(10ms);
    peer.poll();
  }
  return peer.nth_frame(index);
}

// A frame with one field changed: what an altering relay does to a join's claims.
std::string with_field(const std::string& framed, const std::string& key, const std::string& value) {
  FrameReader reader(1 << 20);
  reader.append(framed.data(), framed.size());
  rdzv_test::Frame f;
  std::string error;
  EXPECT_EQ(reader.next(f, error), FrameReader::Status::kFrame) << error;
  f.fields[key] = value;
  return encode_frame(f);
}

bool ipv6_loopback_available() {
  RawPeer probe(1, "::1");  // refused (ECONNREFUSED) when ::1 exists; EADDRNOTAVAIL/ENETUNREACH when not
  return probe.connected || errno == ECONNREFUSED;
}

// Waits for both nodes of a 2-node job; each must end with exit code 0 (the job ended right).
std::vector<dt::RunResult> wait_job_succeeded(std::unique_ptr<dt::BackgroundProcess> node0,
                                              std::unique_ptr<dt::BackgroundProcess> node1) {
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
  nodes.push_back(std::move(node0));
  nodes.push_back(std::move(node1));
  auto results = dt::wait_all(nodes, kJobBound);
  for (std::size_t r = 0; r < results.size(); ++r)
    EXPECT_EQ(results[r].exit_code, 0) << "node " << r << "\n" << results[r].output;
  return results;
}

std::string env_value(const std::string& output, const std::string& name) {
  for (const auto& line : dt::env_lines(output))
    if (line.name == name && line.value) return *line.value;
  return "";
}

}  // namespace

TEST(HostileAuth, RelayedJoinCannotBeReplayedAndTheJobStillEndsRight) {
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "hostile-relay", {"--token", "relay-tok"});
  auto node0 = dt::start_node(fake_worker_node(job, 0, {}, {"--sleep-ms", "1500"}));
  ASSERT_TRUE(dt::wait_listening(*node0)) << node0->output_so_far();
  Relay relay(job.port);
  dt::MultiNodeJob via_relay = job;
  via_relay.port = relay.port();  // node 1 reaches the master only through the relay
  auto node1 = dt::start_node(fake_worker_node(via_relay, 1, {}, {"--sleep-ms", "1500"}));
  for (int i = 0; i < 1000 && relay.captured().empty(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_FALSE(relay.captured().empty()) << node1->output_so_far();

  // The captured join, replayed on a connection of its own: the challenge differs now.
  RawPeer replay(static_cast<std::uint16_t>(job.port));
  ASSERT_TRUE(read_frame(replay, 0));
  replay.send_bytes(relay.captured());
  auto answer = read_frame(replay, 1);
  ASSERT_TRUE(answer) << replay.received;
  EXPECT_EQ(answer->kind, "refuse");
  EXPECT_NE(answer->fields["reason"].find("authentication failed"), std::string::npos) << answer->fields["reason"];
  EXPECT_EQ(replay.received.find("hostile-relay"), std::string::npos) << "the job id went to an unproven peer";

  auto results = wait_job_succeeded(std::move(node0), std::move(node1));
  EXPECT_NE(results[0].output.find("authentication failed"), std::string::npos) << results[0].output;
}

TEST(HostileAuth, RelayThatAltersTheJoinIsRefusedAndTheRealNodeJoinsAfter) {
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "hostile-alter", {"--token", "alter-tok"});
  auto node0 = dt::start_node(fake_worker_node(job, 0, {}, {}));
  ASSERT_TRUE(dt::wait_listening(*node0)) << node0->output_so_far();
  {
    // The relay changes the host name the node claims; the proof still is the node's own.
    Relay relay(job.port, [](const std::string& join) { return with_field(join, "f.host", "impostor"); });
    dt::MultiNodeJob via_relay = job;
    via_relay.port = relay.port();
    auto fooled = dt::start_node(fake_worker_node(via_relay, 1, {}, {}));
    auto result = fooled->wait(kJobBound);
    EXPECT_NE(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("authentication failed"), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("ENV"), std::string::npos) << "a worker started on an altered join";
  }
  EXPECT_EQ(node0->output_so_far().find("impostor"), std::string::npos) << "the altered claims were believed";
  auto node1 = dt::start_node(fake_worker_node(job, 1, {}, {}));
  wait_job_succeeded(std::move(node0), std::move(node1));
}

// Frames after the handshake carry a MAC under the connection's session key: a relay that
// passed the handshake on honestly and then rewrites one frame from the master is refused by
// the node, and nothing of the job reports success. Two rewrites: the workers'
// MASTER_ADDR in the assignment, and a heartbeat turned into "job_end 0" while a worker runs.
TEST(HostileAuth, RelayThatRewritesAFrameAfterTheHandshakeIsRefused) {
  for (bool job_end : {false, true}) {
    SCOPED_TRACE(job_end ? "job_end 0 while the worker runs" : "MASTER_ADDR in the assignment");
    dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "hostile-session", {"--token", "session-tok"});
    auto node0 = dt::start_node(fake_worker_node(job, 0, {}, {"--sleep-ms", "20000"}));
    ASSERT_TRUE(dt::wait_listening(*node0)) << node0->output_so_far();
    std::atomic<bool> worker_runs{false}, rewritten{false};
    Relay relay(job.port, nullptr, [&](std::size_t, const std::string& framed) {
      FrameReader reader(1 << 20);
      reader.append(framed.data(), framed.size());
      rdzv_test::Frame f;
      std::string error;
      if (rewritten || reader.next(f, error) != FrameReader::Status::kFrame) return framed;
      if (!job_end && f.kind == "assign") {
        f.fields["maddr"] = "203.0.113.66";  // the MAC line stays as it was: now it is wrong
      } else if (job_end && worker_runs && (f.kind == "hb" || f.kind == "hb_ack")) {
        f.kind = "msg";
        f.subtype = "job_end";
        f.fields = {{"exit_code", "0"}, {"mac", f.fields["mac"]}};
      } else {
        return framed;
      }
      rewritten = true;
      return encode_frame(f);
    });
    dt::MultiNodeJob via_relay = job;
    via_relay.port = relay.port();
    auto node1 = dt::start_node(fake_worker_node(via_relay, 1, {}, {"--print-env", "--sleep-ms", "20000"}));
    if (job_end) {
      ASSERT_TRUE(node1->wait_for_output("ENV MASTER_ADDR", kJobBound)) << node1->output_so_far();
      worker_runs = true;
    }
    std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
    nodes.push_back(std::move(node0));
    nodes.push_back(std::move(node1));
    auto results = dt::wait_all(nodes, kJobBound);
    EXPECT_TRUE(rewritten);
    for (std::size_t r = 0; r < results.size(); ++r) {
      EXPECT_NE(results[r].exit_code, 0) << "node " << r << "\n" << results[r].output;
      EXPECT_EQ(results[r].output.find("job succeeded"), std::string::npos) << "node " << r << "\n" << results[r].output;
    }
    const std::string& node1_output = results[1].output;
    EXPECT_NE(node1_output.find("refused a frame from 127.0.0.1:" + std::to_string(relay.port())), std::string::npos)
        << node1_output;
    EXPECT_NE(node1_output.find(" after the handshake "), std::string::npos) << node1_output;  // no MAC / fails it
    EXPECT_EQ(node1_output.find("203.0.113.66"), std::string::npos) << "a worker started on a forged MASTER_ADDR";
  }
}

// A fake master that cannot prove the token: never obeyed, said once, connected to again after
// a growing pause until the join timeout (not once per round trip), which then ends the node
// naming it.
rdzv_test::FakeRendezvousMaster::Answer unproven_welcome_then_forged_assignment() {
  return [](const rdzv_test::Frame&, const std::string&) {
    rdzv_test::Frame welcome;
    welcome.kind = "welcome";
    welcome.fields["proof"] = std::string(64, '0');
    rdzv_test::Frame assign;  // would send the workers to an impostor's store
    assign.kind = "assign";
    assign.fields = {{"rank", "1"}, {"count", "2"}, {"offset", "1"}, {"world", "2"},
                     {"maddr", "203.0.113.66"}, {"mport", "29500"}};
    return std::vector<rdzv_test::Frame>{welcome, assign};
  };
}

TEST(HostileAuth, NodeRefusesAFakeMasterThatCannotProveTheToken) {
  rdzv_test::FakeRendezvousMaster fake(unproven_welcome_then_forged_assignment(), /*every_connection=*/true);
  dt::MultiNodeJob job{.launcher = DDPLAUNCH_BIN, .nodes = 2, .master_host = "127.0.0.1", .port = fake.port(),
                       .job_id = "hostile-fake", .flags = {"--join-timeout", "8", "--token", "real-tok"}};
  auto result = dt::run_command(fake_worker_node(job, 1, {}, {"--print-env"}), kJobBound, {}, kUnsetEnv);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("could not prove the rendezvous token"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("127.0.0.1:" + std::to_string(fake.port())), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("connecting again until the join timeout"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("203.0.113.66"), std::string::npos) << "a worker obeyed the fake master";
  std::cout << "fake master: " << fake.connections() << " connection(s) in " << result.seconds << " s\n";
  // 8 s with pauses of 1, 2, 4, 5 s: at most five connections (before: one per round trip).
  EXPECT_GE(fake.connections(), 2);
  EXPECT_LE(fake.connections(), 6);
  EXPECT_LE(dt::count_of(result.output, "connecting again until the join timeout"), 1) << result.output;
}

// A program squats the rendezvous port while node 1 joins; once node 0 has the port, node 1
// joins it and the job ends right (before: node 1 ended at the squatter's first answer, exit 2).
TEST(HostileAuth, APortSquatterGoesAndTheNodeJoinsTheRealMaster) {
  rdzv_test::FakeRendezvousMaster squatter(unproven_welcome_then_forged_assignment(), /*every_connection=*/true);
  dt::MultiNodeJob job{.launcher = DDPLAUNCH_BIN, .nodes = 2, .master_host = "127.0.0.1", .port = squatter.port(),
                       .job_id = "hostile-squat", .flags = {"--join-timeout", "40", "--grace", "1", "--token",
                                                            "real-tok"}};
  auto node1 = dt::start_node(fake_worker_node(job, 1, {}, {"--print-env"}));
  ASSERT_TRUE(node1->wait_for_output("could not prove the rendezvous token", 20s)) << node1->output_so_far();
  squatter.close();
  auto node0 = dt::start_node(fake_worker_node(job, 0, {}, {"--print-env"}));
  auto results = wait_job_succeeded(std::move(node0), std::move(node1));
  EXPECT_EQ(results[1].output.find("203.0.113.66"), std::string::npos) << results[1].output;
  EXPECT_EQ(env_value(results[1].output, "WORLD_SIZE"), "2") << results[1].output;
}

TEST(HostileAuth, PeersWithoutARankCannotStopOrEndTheJob) {
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "hostile-norank", {"--token", "norank-tok"});
  auto node0 = dt::start_node(fake_worker_node(job, 0, {}, {"--print-env", "--sleep-ms", "1000"}));
  ASSERT_TRUE(dt::wait_listening(*node0)) << node0->output_so_far();
  rdzv_test::Frame problem;
  problem.kind = "msg";
  problem.job_id = "hostile-norank";
  problem.subtype = "node_problem";
  problem.fields = {{"exit_code", "7"}, {"message", "forged problem"}};
  rdzv_test::Frame finished = problem;
  finished.subtype = "node_finished";
  finished.fields = {{"exit_code", "0"}};
  // One speaks before joining at all; one sends a join without a valid proof, then speaks.
  RawPeer early(static_cast<std::uint16_t>(job.port)), bad_join(static_cast<std::uint16_t>(job.port));
  auto hello = read_frame(bad_join, 0);
  ASSERT_TRUE(hello && read_frame(early, 0));
  early.send_bytes(encode_frame(problem) + encode_frame(finished));
  rdzv_test::Frame join;
  join.kind = "join";
  join.job_id = "hostile-norank";
  join.fields = {{"protocol", std::to_string(rdzv_test::kProtocolVersion)}, {"nonce", std::string(64, 'a')},
                 {"proof", std::string(64, 'b')}, {"f.host", "intruder"}, {"f.req", "-1"}, {"f.nproc", "1"},
                 {"f.gpus", "0"}};
  bad_join.send_bytes(encode_frame(join) + encode_frame(problem) + encode_frame(finished));

  auto node1 = dt::start_node(fake_worker_node(job, 1, {}, {"--print-env", "--sleep-ms", "1000"}));
  // A forged node_problem would have stopped the job with exit code 7.
  auto results = wait_job_succeeded(std::move(node0), std::move(node1));
  EXPECT_EQ(results[0].output.find("forged problem"), std::string::npos) << results[0].output;
  for (int r = 0; r < 2; ++r)  // both nodes' workers ran
    EXPECT_EQ(env_value(results[r].output, "GROUP_RANK"), std::to_string(r)) << results[r].output;
}

// A one-launcher job's own node joins with an in-memory secret instead of a token proof (no
// libcrypto at start). A peer that claims to be that own node, with a guessed secret and no
// proof, is refused as unauthenticated, and the job runs on with its own node.
TEST(HostileAuth, AJoinClaimingToBeAOneLauncherJobsOwnNodeIsRefused) {
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 1, "hostile-own");
  auto node0 = dt::start_node(fake_worker_node(job, 0, {}, {"--print-env", "--sleep-ms", "1500"}));
  ASSERT_TRUE(dt::wait_listening(*node0)) << node0->output_so_far();
  RawPeer claimant(static_cast<std::uint16_t>(job.port));
  ASSERT_TRUE(read_frame(claimant, 0));
  rdzv_test::Frame join;
  join.kind = "join";
  join.job_id = "hostile-own";
  join.fields = {{"protocol", std::to_string(rdzv_test::kProtocolVersion)}, {"nonce", std::string(64, 'a')},
                 {"own", std::string(64, 'c')}, {"f.host", "intruder"}, {"f.req", "0"}, {"f.nproc", "1"},
                 {"f.gpus", "0"}};
  claimant.send_bytes(encode_frame(join));
  auto answer = read_frame(claimant, 1);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->kind, "refuse");
  EXPECT_NE(answer->fields["reason"].find("authentication failed"), std::string::npos) << answer->fields["reason"];
  dt::RunResult result = node0->wait(kJobBound);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(env_value(result.output, "GROUP_RANK"), "0") << result.output;  // its own node's worker ran
}

TEST(HostileAuth, MasterListensOnItsOwnAddressNotTheWildcardUnlessAsked) {
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "hostile-bind");
  auto node0 = dt::start_node(fake_worker_node(job, 0, {}, {}));
  ASSERT_TRUE(dt::wait_listening(*node0)) << node0->output_so_far();
  RawPeer own(static_cast<std::uint16_t>(job.port), "127.0.0.1"), other(static_cast<std::uint16_t>(job.port), "127.0.0.2");
  EXPECT_TRUE(own.connected);
  EXPECT_FALSE(other.connected) << "127.0.0.2 reached a master told to be 127.0.0.1";
  node0.reset();  // SIGKILL: this job never completes

  dt::MultiNodeJob wide = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "hostile-bind-all", {"--rdzv-bind", "0.0.0.0"});
  auto wide0 = dt::start_node(fake_worker_node(wide, 0, {}, {}));
  ASSERT_TRUE(dt::wait_listening(*wide0)) << wide0->output_so_far();
  RawPeer any(static_cast<std::uint16_t>(wide.port), "127.0.0.2");
  EXPECT_TRUE(any.connected) << wide0->output_so_far();
}

TEST(HostileAuth, NodeZeroWhoseMasterAddressIsNotItsOwnSaysSo) {
  dt::MultiNodeJob job{.launcher = DDPLAUNCH_BIN, .nodes = 2, .master_host = "198.18.0.99", .port = 29400,
                       .job_id = "hostile-foreign", .flags = {"--join-timeout", "5"}};
  auto result = dt::run_command(fake_worker_node(job, 0, {}, {}), kJobBound, {}, kUnsetEnv);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("198.18.0.99"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("none of that is an address of this machine"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("--rdzv-bind"), std::string::npos) << result.output;
}

TEST(HostileAuth, TwoNodeJobOnIpv6Loopback) {
  if (!ipv6_loopback_available()) GTEST_SKIP() << "no IPv6 loopback (::1) on this machine";
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "hostile-v6", {"--token", "v6-tok"});
  job.master_host = "[::1]";
  std::vector<std::vector<std::string>> argv_by_node;
  for (int r = 0; r < 2; ++r) argv_by_node.push_back(fake_worker_node(job, r, {}, {"--print-env"}));
  auto results = dt::run_job_nodes(argv_by_node, kJobBound);
  ASSERT_EQ(results.size(), 2u) << "node 0 never listened";
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "node " << r << "\n" << results[r].output;
    EXPECT_EQ(env_value(results[r].output, "MASTER_ADDR"), "::1") << results[r].output;  // bare: torch's form
  }
}

TEST(HostileAuth, NetnsJobOverIpv6) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("v6"), 2);
  const std::string master = cluster.ipv6_address(1);
  const dt::MultiNodeJob job{.launcher = DDPLAUNCH_BIN, .nodes = 2, .master_host = "[" + master + "]",
                             .port = 29400, .job_id = "hostile-netns-v6",
                             .flags = {"--join-timeout", "30", "--grace", "1", "--token", "netns-tok"}};
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
  for (int host = 1; host <= 2; ++host) {
    nodes.push_back(std::make_unique<dt::BackgroundProcess>());
    EXPECT_TRUE(nodes.back()->start(cluster.exec_argv(host, fake_worker_node(job, host - 1, {}, {"--print-env"})), {},
                                    kUnsetEnv));
  }
  auto results = dt::wait_all(nodes, kJobBound);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "node " << r << "\n" << results[r].output;
    EXPECT_EQ(env_value(results[r].output, "MASTER_ADDR"), master) << results[r].output;
  }
  // Node 0 listened on its IPv6 address only, and saw node 1 come from its IPv6 address.
  EXPECT_NE(results[0].output.find("of " + master + " for 2 node(s)"), std::string::npos) << results[0].output;
}

// A master *name* that resolves to IPv6 first: in a private mount namespace the test puts its
// own /etc/hosts over the real one ("v6master" -> ::1 only), and both nodes find the master
// by that name. Root only (unshare -m, mount --bind).
TEST(HostileAuth, MasterNameResolvingToIpv6Works) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (a private mount namespace for /etc/hosts)";
  if (!ipv6_loopback_available()) GTEST_SKIP() << "no IPv6 loopback (::1) on this machine";
  char dir_pattern[] = "/tmp/ddpl_v6name_XXXXXX";
  ASSERT_NE(::mkdtemp(dir_pattern), nullptr);
  const std::string dir = dir_pattern, hosts = dir + "/hosts";
  std::ofstream(hosts) << "127.0.0.1 localhost\n::1 v6master\n";
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "hostile-v6name", {"--token", "v6-name-tok"});
  job.master_host = "v6master";
  std::string script = "mount --bind " + hosts + " /etc/hosts || exit 90; ";
  for (int r = 0; r < 2; ++r) {
    std::string line;
    for (const auto& word : fake_worker_node(job, r, {}, {"--print-env"})) line += "'" + word + "' ";
    script += line + "> " + dir + "/node" + std::to_string(r) + ".log 2>&1 & ";
  }
  script += "wait %1; a=$?; wait %2; b=$?; exit $((a + b))";
  auto result = dt::run_command({"unshare", "-m", "--propagation", "private", "sh", "-c", script}, kJobBound, {},
                                kUnsetEnv);
  auto read = [&](int r) {
    std::ifstream in(dir + "/node" + std::to_string(r) + ".log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string node0 = read(0), node1 = read(1);
  std::filesystem::remove_all(dir);
  ASSERT_NE(result.exit_code, 90) << "mount --bind failed: " << result.output;
  EXPECT_EQ(result.exit_code, 0) << result.output << "\nnode 0:\n" << node0 << "\nnode 1:\n" << node1;
  EXPECT_EQ(env_value(node0, "MASTER_ADDR"), "::1") << node0;
  EXPECT_EQ(env_value(node1, "MASTER_ADDR"), "::1") << node1;
}
