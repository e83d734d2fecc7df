// Elections through the etcd client against a real etcd: one leader among two candidates,
// leadership moving on resign and on the leader's lease expiring, fencing (a transaction
// guarded by an old leader key fails after leadership moved), and a campaign's bounded or
// cancelled wait. Skipped, saying why, where /usr/bin/etcd is not installed.
#include <gtest/gtest.h>

#include "etcd/lease_keeper.h"
#include "etcd_cluster.h"
#include "etcd_test_wait.h"

namespace ddplaunch::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kElection = "job/42/coordinator";

// A launcher: its own client, a lease kept alive, a campaign in flight or won.
struct Candidate {
  std::shared_ptr<etcd::Client> client;
  etcd::LeaseGrant lease;
  std::shared_ptr<etcd::LeaseKeeper> keeper;
  std::optional<Result<etcd::LeaderKey>> won;
  std::shared_ptr<etcd::CancelSignal> cancel = std::make_shared<etcd::CancelSignal>();

  void campaign(const std::string& value, std::chrono::milliseconds wait) {
    won.reset();
    client->campaign(kElection, value, lease.id, wait, cancel, [this](Result<etcd::LeaderKey> r) { won = std::move(r); });
  }
  bool leads() const { return won && won->ok(); }
};

class EtcdElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EtcdCluster::available())
      GTEST_SKIP() << kNoEtcd;
    ASSERT_EQ(etcd_.start(1), "");
    for (auto* c : {&a_, &b_}) {
      c->client = make_client(io_, etcd_.endpoints());
      ASSERT_TRUE(c->client);
      auto lease = AWAIT(etcd::LeaseGrant, c->client->grant_lease(2s, cb));
      ASSERT_TRUE(lease) << lease.error;
      c->lease = *lease;
      c->keeper = etcd::LeaseKeeper::start(c->client, c->lease, [](const std::string&) {});
    }
  }
  std::optional<etcd::KeyValue> leader() {
    auto r = AWAIT(std::optional<etcd::KeyValue>, a_.client->leader(kElection, cb));
    EXPECT_TRUE(r) << r.error;
    return r ? *r : std::nullopt;
  }

  boost::asio::io_context io_;
  EtcdCluster etcd_;
  Candidate a_, b_;
};

TEST_F(EtcdElectionTest, OneLeaderThenTheSecondAfterResignAndAfterLeaseExpiry) {
  EXPECT_FALSE(leader().has_value());  // no candidate yet: no leader, not an error
  a_.campaign("node-a", 20s);
  ASSERT_TRUE(run_until(io_, [&] { return a_.won.has_value(); }, 10s));
  ASSERT_TRUE(a_.leads()) << a_.won->error;
  b_.campaign("node-b", 20s);
  run_for(io_, 1s);
  EXPECT_FALSE(b_.won.has_value()) << "two leaders at once";
  EXPECT_EQ(leader()->value, "node-a");

  ASSERT_TRUE(AWAIT(etcd::Revision, a_.client->resign(**a_.won, cb)));
  ASSERT_TRUE(run_until(io_, [&] { return b_.won.has_value(); }, 10s));
  ASSERT_TRUE(b_.leads()) << b_.won->error;
  EXPECT_EQ(leader()->value, "node-b");
  ASSERT_TRUE(AWAIT(etcd::Revision, b_.client->proclaim(**b_.won, "node-b, generation 2", cb)));
  EXPECT_EQ(leader()->value, "node-b, generation 2");

  // b's launcher stops renewing (hung, cut off): after its TTL a takes over.
  a_.campaign("node-a again", 20s);
  run_for(io_, 500ms);
  EXPECT_FALSE(a_.won.has_value());
  b_.keeper->stop();
  const auto stopped = std::chrono::steady_clock::now();
  ASSERT_TRUE(run_until(io_, [&] { return a_.won.has_value(); }, 10s));
  ASSERT_TRUE(a_.leads()) << a_.won->error;
  EXPECT_GE(std::chrono::steady_clock::now() - stopped, 1s);
  EXPECT_EQ(leader()->value, "node-a again");
}

TEST_F(EtcdElectionTest, TxnGuardedByAnOldLeaderKeyFailsAfterLeadershipMoved) {
  a_.campaign("node-a", 20s);
  ASSERT_TRUE(run_until(io_, [&] { return a_.won.has_value(); }, 10s));
  ASSERT_TRUE(a_.leads()) << a_.won->error;
  const etcd::LeaderKey a_key = **a_.won;
  auto write_state = [&](etcd::Client& c, const etcd::LeaderKey& k, const std::string& state) {
    return AWAIT(etcd::TxnResult, c.txn({{etcd::Compare::still_leader(k)}, {etcd::TxnOp::put("job/42/state", state)}, {}}, cb));
  };
  auto first = write_state(*a_.client, a_key, "decided by a");
  ASSERT_TRUE(first) << first.error;
  EXPECT_TRUE(first->succeeded);

  b_.campaign("node-b", 20s);
  a_.keeper->stop();  // a stalls; its lease runs out and b leads
  ASSERT_TRUE(run_until(io_, [&] { return b_.won.has_value(); }, 10s));
  ASSERT_TRUE(b_.leads()) << b_.won->error;

  // a wakes up and writes as if it still led: fenced off.
  auto stale = write_state(*a_.client, a_key, "stale write by a");
  ASSERT_TRUE(stale) << stale.error;
  EXPECT_FALSE(stale->succeeded);
  auto by_b = write_state(*b_.client, **b_.won, "decided by b");
  ASSERT_TRUE(by_b) << by_b.error;
  EXPECT_TRUE(by_b->succeeded);
  EXPECT_EQ(AWAIT(etcd::RangeResult, b_.client->get("job/42/state", cb))->kvs.at(0).value, "decided by b");
}

TEST_F(EtcdElectionTest, CampaignWaitIsBoundedAndCancellable) {
  a_.campaign("node-a", 20s);
  ASSERT_TRUE(run_until(io_, [&] { return a_.won.has_value(); }, 10s));
  ASSERT_TRUE(a_.leads());

  const auto t0 = std::chrono::steady_clock::now();
  b_.campaign("node-b", 1s);
  ASSERT_TRUE(run_until(io_, [&] { return b_.won.has_value(); }, 5s));
  ASSERT_FALSE(b_.leads());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_NE(b_.won->error.find("did not complete within 1.0 s"), std::string::npos) << b_.won->error;

  b_.campaign("node-b", 20s);
  run_for(io_, 300ms);
  b_.cancel->cancel();
  ASSERT_TRUE(run_until(io_, [&] { return b_.won.has_value(); }, 2s));
  ASSERT_FALSE(b_.leads());
  EXPECT_NE(b_.won->error.find("cancelled"), std::string::npos) << b_.won->error;

  // etcd withdrew both abandoned candidacies: a's resign leaves no leader.
  run_for(io_, 500ms);
  ASSERT_TRUE(AWAIT(etcd::Revision, a_.client->resign(**a_.won, cb)));
  EXPECT_FALSE(leader().has_value());
}

}  // namespace
}  // namespace ddplaunch::testing
