// A real ddplaunch node (--rdzv-backend etcd, one fake_worker) against scripted coordinators
// the test elects in a real etcd itself ("a node obeys no order of an older
// revision"). Coordinator 1 wins the election, coordinator 2 waits in line ahead of the
// node's own candidacy; revoking coordinator 1's lease makes coordinator 2 the leader. The
// node must then
//   - leave coordinator 1 for coordinator 2 (its workers stopped, the next generation run),
//   - receive nothing more from coordinator 1, which still runs and still sends orders
//     (the superseded coordinator of a cut link: nothing of it is carried out),
//   - refuse and log an order stamped with coordinator 1's election revision when one does
//     reach it (here relayed by coordinator 2: the path no longer matters, the stamp does),
//   - obey coordinator 2's own orders.
// Skipped, saying why, where /usr/bin/etcd is not installed.
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "wire/launcher_messages.h"
#include "ddplaunch/rendezvous/generation_format.h"
#include "etcd_cluster.h"
#include "etcd_test_wait.h"
#include "fake_job_coordinator.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::Generation;
using ddplaunch::Result;
using ddplaunch::testing::BackgroundProcess;
using ddplaunch::testing::EtcdCluster;
using ddplaunch::testing::RunResult;
using fake_job_coordinator::FakeJobCoordinator;
namespace etcd = ddplaunch::etcd;
namespace messages = ddplaunch::messages;
namespace rdzv = ddplaunch::rendezvous;

constexpr auto kStep = fake_job_coordinator::kEventBound;
constexpr const char* kJob = "etcd-order-fencing";
const std::string kElection = std::string("/ddplaunch/") + kJob + "/coordinator";  // EtcdSeat's key layout

// The test's own etcd client on a loop thread of its own, so that a campaign waiting in
// line keeps going while the test thread waits for the node.
class Candidates {
 public:
  explicit Candidates(const std::string& endpoints) : work_(io_.get_executor()) {
    client_ = ddplaunch::testing::make_client(io_, endpoints);
    loop_ = std::thread([this] { io_.run(); });
  }
  ~Candidates() {
    work_.reset();
    io_.stop();
    loop_.join();
  }
  bool ready() const { return client_ != nullptr; }

  // Starts `call(callback)` on the loop; the future gets its result.
  template <typename T, typename Call>
  std::future<Result<T>> start(Call call) {
    auto promise = std::make_shared<std::promise<Result<T>>>();
    auto result = promise->get_future();
    boost::asio::post(io_, [this, call, promise] {
      call(*client_, [promise](Result<T> r) { promise->set_value(std::move(r)); });
    });
    return result;
  }
  template <typename T, typename Call>
  Result<T> await(Call call) {
    auto result = start<T>(call);
    if (result.wait_for(kStep) != std::future_status::ready) return Result<T>::failure("no answer from etcd");
    return result.get();
  }

  // A candidate with a lease long enough for the whole test (no keepalive needed).
  Result<etcd::LeaseGrant> lease() {
    return await<etcd::LeaseGrant>([](etcd::Client& c, auto cb) { c.grant_lease(120s, cb); });
  }
  std::future<Result<etcd::LeaderKey>> campaign(etcd::LeaseId lease) {
    return start<etcd::LeaderKey>([lease, cancel = cancel_](etcd::Client& c, auto cb) {
      c.campaign(kElection, "", lease, 60s, cancel, cb);
    });
  }
  // Publishes the coordinator's address the way an elected launcher does.
  bool proclaim(const etcd::LeaderKey& key, const std::string& address) {
    return bool(await<etcd::Revision>([key, address](etcd::Client& c, auto cb) { c.proclaim(key, address, cb); }));
  }
  bool revoke(etcd::LeaseId lease) {
    return bool(await<etcd::Revision>([lease](etcd::Client& c, auto cb) { c.revoke_lease(lease, cb); }));
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::shared_ptr<etcd::Client> client_;
  std::shared_ptr<etcd::CancelSignal> cancel_ = std::make_shared<etcd::CancelSignal>();
  std::thread loop_;
};

// `m` with the election revision `revision` stamped on it, as the coordinator elected at
// that revision stamps its orders.
rdzv::Message stamped(rdzv::Message m, etcd::Revision revision) {
  m.fields[rdzv::kOrderRevisionField] = std::to_string(revision);
  return m;
}

// The scripted coordinator gives the node its slot in `generation` once the node joins.
void admit(FakeJobCoordinator& coordinator, Generation generation, const BackgroundProcess& node) {
  auto member = coordinator.next_member();
  ASSERT_TRUE(member) << node.output_so_far();
  coordinator.on_loop([&] { coordinator.server().begin_generation(generation, {*member}, {}); });
  ASSERT_TRUE(node.wait_for_output(fmt::format("DDPLAUNCH_GENERATION={}", generation), kStep)) << node.output_so_far();
}

// True once no node is joined to `coordinator` (asked on its loop), within kStep.
bool no_node_joined(FakeJobCoordinator& coordinator) {
  const auto deadline = std::chrono::steady_clock::now() + kStep;
  for (int round = 0; round < 1000 && std::chrono::steady_clock::now() < deadline; ++round) {
    bool empty = false;
    coordinator.on_loop([&] { empty = coordinator.server().joined_nodes().empty(); });
    if (empty) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

TEST(EtcdOrderFencing, TheSupersededCoordinatorIsLeftAndItsStampedOrdersAreRefused) {
  if (!EtcdCluster::available()) GTEST_SKIP() << ddplaunch::testing::kNoEtcd;
  EtcdCluster etcd_servers;
  ASSERT_EQ(etcd_servers.start(1), "");
  Candidates candidates(etcd_servers.endpoints());
  ASSERT_TRUE(candidates.ready());

  // Coordinator 1 leads; coordinator 2 waits in line before the node's own candidacy.
  auto lease1 = candidates.lease();
  auto lease2 = candidates.lease();
  ASSERT_TRUE(lease1 && lease2);
  auto won1 = candidates.campaign(lease1->id).get();
  ASSERT_TRUE(won1) << won1.error;
  auto campaign2 = candidates.campaign(lease2->id);
  ASSERT_EQ(campaign2.wait_for(300ms), std::future_status::timeout) << "coordinator 2 must wait behind coordinator 1";
  const etcd::Revision revision1 = won1->rev;
  FakeJobCoordinator coordinator1({.expected_nodes = 1, .membership = true, .token = {}},
                          {.job_id = kJob, .order_revision = std::to_string(revision1)});
  ASSERT_TRUE(candidates.proclaim(*won1, coordinator1.master()));

  BackgroundProcess node;
  ASSERT_TRUE(node.start({DDPLAUNCH_BIN, "--rdzv-backend", "etcd", "--rdzv-endpoint", etcd_servers.endpoints(),
                          "--rdzv-id", kJob, "--nnodes", "1", "--nproc-per-node", "1", "--grace", "1",
                          "--heartbeat-interval", "0.2", "--heartbeat-timeout", "5", "--no-peer-probe", "--",
                          FAKE_WORKER_BIN, "--print-env", "--sleep-ms", "60000"}));
  ASSERT_TRUE(node.wait_for_output(
      fmt::format("the job's coordinator is at {} (election revision {})", coordinator1.master(), revision1), kStep))
      << node.output_so_far();
  admit(coordinator1, Generation{0}, node);

  // Coordinator 1's lease is gone (as when its host is cut off): coordinator 2 leads.
  ASSERT_TRUE(candidates.revoke(lease1->id));
  ASSERT_EQ(campaign2.wait_for(kStep), std::future_status::ready);
  auto won2 = campaign2.get();
  ASSERT_TRUE(won2) << won2.error;
  const etcd::Revision revision2 = won2->rev;
  ASSERT_GT(revision2, revision1);
  FakeJobCoordinator coordinator2({.expected_nodes = 1, .membership = true, .token = {}}, {.job_id = kJob, .order_revision = {}});
  ASSERT_TRUE(candidates.proclaim(*won2, coordinator2.master()));
  ASSERT_TRUE(node.wait_for_output(fmt::format("etcd names a newer coordinator at {} (election revision {} > {})",
                                               coordinator2.master(), revision2, revision1),
                                   kStep))
      << node.output_so_far();
  admit(coordinator2, Generation{1}, node);

  // Coordinator 1 still runs and orders a restart and a stop: the node left it, so none of it
  // arrives, and the node goes on in coordinator 2's generation.
  EXPECT_TRUE(no_node_joined(coordinator1)) << "the node still listens to coordinator 1";
  coordinator1.broadcast(messages::encode(Generation{1}, messages::Restart{"an order of the superseded coordinator"}));
  coordinator1.broadcast(messages::encode(Generation{1}, messages::Stop{"an order of the superseded coordinator", 9}));

  // The same orders stamped with coordinator 1's revision, reaching the node on its live
  // connection: refused, logged, and not carried out (its worker goes on, nothing reported).
  coordinator2.broadcast(stamped(messages::encode(Generation{1}, messages::Restart{"a stale restart"}), revision1));
  coordinator2.broadcast(stamped(messages::encode(Generation{1}, messages::Stop{"a stale stop", 9}), revision1));
  ASSERT_TRUE(node.wait_for_output(fmt::format("refused an order of the superseded coordinator (election revision {} < {}",
                                               revision1, revision2),
                                   kStep))
      << node.output_so_far();
  EXPECT_FALSE(coordinator2.next(messages::Kind::NodeFinished, 1500ms)) << "a refused stop was carried out";
  const std::string so_far = node.output_so_far();
  EXPECT_EQ(so_far.find("master ordered a group restart"), std::string::npos) << so_far;
  EXPECT_EQ(so_far.find("master stopped the job"), std::string::npos) << so_far;
  EXPECT_EQ(so_far.find("DDPLAUNCH_GENERATION=2"), std::string::npos) << so_far;

  // Coordinator 2's own stop (its stamp) is obeyed.
  coordinator2.broadcast(stamped(messages::encode(Generation{1}, messages::Stop{"a test stop", 4}), revision2));
  auto finished = coordinator2.next(messages::Kind::NodeFinished);
  ASSERT_TRUE(finished) << node.output_so_far();
  EXPECT_EQ(messages::decode_node_finished(finished->message)->summary, "stopped");
  coordinator2.broadcast(messages::encode(Generation{1}, messages::JobEnd{4}));
  RunResult r = node.wait(kStep);
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 4) << r.output;
  candidates.revoke(lease2->id);
}

}  // namespace
