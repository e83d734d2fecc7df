// The etcd client against a real etcd (started by the fixture on 127.0.0.1): key-value, txn,
// leases and their keepalive, errors in seconds naming the endpoint, failover along the
// endpoint list, a 3-member cluster that loses a member, the prefix watch. Skipped, saying
// why, where /usr/bin/etcd is not installed.
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>

#include "etcd/lease_keeper.h"
#include "etcd/watch.h"
#include "etcd_cluster.h"
#include "etcd_test_wait.h"

namespace ddplaunch::testing {
namespace {

using namespace std::chrono_literals;

class EtcdClientTest : public ::testing::Test {
 protected:
  void start(int members) {
    if (!EtcdCluster::available())
      GTEST_SKIP() << kNoEtcd;
    const auto why = etcd_.start(members);
    ASSERT_EQ(why, "");
    client_ = make_client(io_, etcd_.endpoints());
    ASSERT_TRUE(client_);
  }
  void SetUp() override { start(1); }

  boost::asio::io_context io_;
  EtcdCluster etcd_;
  std::shared_ptr<etcd::Client> client_;
};

TEST_F(EtcdClientTest, PutGetPrefixAndDelete) {
  for (const auto& [k, v] : {std::pair{"job/a/1", "one"}, {"job/a/2", "two"}, {"job/b/1", "other"}})
    ASSERT_TRUE(AWAIT(etcd::Revision, client_->put(k, v, 0, cb)));
  auto one = AWAIT(etcd::RangeResult, client_->get("job/a/1", cb));
  ASSERT_TRUE(one) << one.error;
  ASSERT_EQ(one->kvs.size(), 1u);
  EXPECT_EQ(one->kvs[0].value, "one");
  EXPECT_GT(one->kvs[0].create_revision, 0);
  auto missing = AWAIT(etcd::RangeResult, client_->get("job/a/3", cb));
  ASSERT_TRUE(missing) << missing.error;
  EXPECT_TRUE(missing->kvs.empty());
  auto prefix = AWAIT(etcd::RangeResult, client_->get_prefix("job/a/", cb));
  ASSERT_TRUE(prefix) << prefix.error;
  ASSERT_EQ(prefix->kvs.size(), 2u);
  EXPECT_EQ(prefix->kvs[0].key, "job/a/1");
  EXPECT_EQ(prefix->kvs[1].value, "two");
  // Bytes that are not text survive base64 both ways.
  const std::string binary("\x00\xff\n\"k", 5);
  ASSERT_TRUE(AWAIT(etcd::Revision, client_->put("job/bin", binary, 0, cb)));
  EXPECT_EQ(AWAIT(etcd::RangeResult, client_->get("job/bin", cb))->kvs.at(0).value, binary);
  auto deleted = AWAIT(std::int64_t, client_->erase_prefix("job/a/", cb));
  ASSERT_TRUE(deleted) << deleted.error;
  EXPECT_EQ(*deleted, 2);
  EXPECT_EQ(AWAIT(std::int64_t, client_->erase("job/b/1", cb)).value, 1);
  EXPECT_TRUE(AWAIT(etcd::RangeResult, client_->get_prefix("job/a/", cb))->kvs.empty());
}

// etcd with authentication: a client without credentials is told what to give; one with them
// authenticates first, and when its token expired (etcd's --auth-token-ttl, here 1 s idle)
// the next request is refused once, authenticates again and succeeds.
TEST_F(EtcdClientTest, AuthenticatesAndRenewsAnExpiredToken) {
  if (::access(kEtcdctlBinary, X_OK) != 0) GTEST_SKIP() << "etcdctl is not installed";
  etcd_.kill(0);
  etcd_.add_flags({"--auth-token-ttl", "1"});
  ASSERT_EQ(etcd_.restart(0), "");
  ASSERT_EQ(etcd_.enable_auth("pw"), "");
  etcd::ClientOptions o;
  o.endpoints = *etcd::parse_endpoints(etcd_.endpoints(), "--rdzv-endpoint");
  o.credentials = {"root", "pw", "the test"};
  auto created = etcd::Client::create(io_, o);
  ASSERT_TRUE(created) << created.error;
  auto user = *created;
  ASSERT_TRUE(AWAIT(etcd::Revision, user->put("k", "1", 0, cb)));
  auto anonymous = AWAIT(etcd::Revision, client_->put("k", "x", 0, cb));
  ASSERT_FALSE(anonymous);
  EXPECT_NE(anonymous.error.find("username=NAME"), std::string::npos) << anonymous.error;
  std::this_thread::sleep_for(2500ms);  // the token expires unused
  auto renewed = AWAIT(etcd::Revision, user->put("k", "2", 0, cb));
  ASSERT_TRUE(renewed) << renewed.error;
  EXPECT_EQ(AWAIT(etcd::RangeResult, user->get("k", cb))->kvs.at(0).value, "2");
  o.credentials.password = "wrong";
  auto refused = AWAIT(etcd::Revision, (*etcd::Client::create(io_, o))->put("k", "3", 0, cb));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error.find("invalid user ID or password"), std::string::npos) << refused.error;
}

TEST_F(EtcdClientTest, TxnAppliesOnlyWhenEveryCompareHolds) {
  auto rev = AWAIT(etcd::Revision, client_->put("state", "v1", 0, cb));
  ASSERT_TRUE(rev) << rev.error;
  etcd::Txn guarded{{etcd::Compare::mod_revision("state", *rev)}, {etcd::TxnOp::put("state", "v2")}, {}};
  auto first = AWAIT(etcd::TxnResult, client_->txn(guarded, cb));
  ASSERT_TRUE(first) << first.error;
  EXPECT_TRUE(first->succeeded);
  // The same guard again: the put moved mod_revision, so the compare fails and nothing is written.
  guarded.success = {etcd::TxnOp::put("state", "v3")};
  guarded.failure = {etcd::TxnOp::put("lost", "yes")};
  auto second = AWAIT(etcd::TxnResult, client_->txn(guarded, cb));
  ASSERT_TRUE(second) << second.error;
  EXPECT_FALSE(second->succeeded);
  EXPECT_EQ(AWAIT(etcd::RangeResult, client_->get("state", cb))->kvs.at(0).value, "v2");
  EXPECT_EQ(AWAIT(etcd::RangeResult, client_->get("lost", cb))->kvs.at(0).value, "yes");
  // By value, by version, create-if-absent, and a delete in the branch.
  auto by_value = AWAIT(etcd::TxnResult, client_->txn({{etcd::Compare::value_is("state", "v2"), etcd::Compare::version("state", 2)},
                                                       {etcd::TxnOp::erase("lost"), etcd::TxnOp::put("made", "1")}, {}}, cb));
  ASSERT_TRUE(by_value && by_value->succeeded) << by_value.error;
  EXPECT_TRUE(AWAIT(etcd::RangeResult, client_->get("lost", cb))->kvs.empty());
  auto absent = AWAIT(etcd::TxnResult, client_->txn({{etcd::Compare::absent("made")}, {etcd::TxnOp::put("made", "2")}, {}}, cb));
  ASSERT_TRUE(absent) << absent.error;
  EXPECT_FALSE(absent->succeeded);
}

TEST_F(EtcdClientTest, KeyOfALeaseWhoseKeepaliveStopsVanishesAfterTheTtl) {
  auto lease = AWAIT(etcd::LeaseGrant, client_->grant_lease(2s, cb));
  ASSERT_TRUE(lease) << lease.error;
  ASSERT_TRUE(AWAIT(etcd::Revision, client_->put("nodes/1", "host1", lease->id, cb)));
  std::string lost;
  auto keeper = etcd::LeaseKeeper::start(client_, *lease, [&](const std::string& why) { lost = why; });
  run_for(io_, 4s);  // twice the TTL: only the keepalive holds the key
  EXPECT_EQ(lost, "");
  ASSERT_EQ(AWAIT(etcd::RangeResult, client_->get("nodes/1", cb))->kvs.size(), 1u);
  keeper->stop();
  const auto stopped = std::chrono::steady_clock::now();
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() - stopped < 10s) {
    run_for(io_, 200ms);
    auto r = AWAIT(etcd::RangeResult, client_->get("nodes/1", cb));
    gone = r && r->kvs.empty();
  }
  EXPECT_TRUE(gone) << "the key outlived its lease by 10 s";
  EXPECT_GE(std::chrono::steady_clock::now() - stopped, 1s);
  EXPECT_EQ(AWAIT(std::int64_t, client_->keep_alive_once(lease->id, cb)).value, 0);
  auto put = AWAIT(etcd::Revision, client_->put("nodes/1", "again", lease->id, cb));
  ASSERT_FALSE(put);
  EXPECT_NE(put.error.find("lease not found"), std::string::npos) << put.error;
  EXPECT_NE(put.error.find("expired or was revoked"), std::string::npos) << put.error;
}

TEST_F(EtcdClientTest, KeeperReportsARevokedLeaseAndEtcdGone) {
  auto lease = AWAIT(etcd::LeaseGrant, client_->grant_lease(3s, cb));
  ASSERT_TRUE(lease) << lease.error;
  std::string lost;
  auto keeper = etcd::LeaseKeeper::start(client_, *lease, [&](const std::string& why) { lost = why; });
  ASSERT_TRUE(AWAIT(etcd::Revision, client_->revoke_lease(lease->id, cb)));
  EXPECT_TRUE(run_until(io_, [&] { return !lost.empty(); }, 5s));
  EXPECT_NE(lost.find("no longer knows lease"), std::string::npos) << lost;

  auto second = AWAIT(etcd::LeaseGrant, client_->grant_lease(2s, cb));
  ASSERT_TRUE(second) << second.error;
  lost.clear();
  auto keeper2 = etcd::LeaseKeeper::start(client_, *second, [&](const std::string& why) { lost = why; });
  etcd_.kill(0);
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_TRUE(run_until(io_, [&] { return !lost.empty(); }, 6s));
  EXPECT_LT(std::chrono::steady_clock::now() - killed, 3s);  // at most one TTL after the last renewal
  EXPECT_NE(lost.find("whole TTL of 2 s"), std::string::npos) << lost;
  EXPECT_NE(lost.find("connection refused"), std::string::npos) << lost;
}

TEST_F(EtcdClientTest, ClosedPortFailsInSecondsNamingTheEndpoint) {
  const int port = free_tcp_port();  // reserved for this test, nobody listens
  auto dead = make_client(io_, "127.0.0.1:" + std::to_string(port));
  const auto t0 = std::chrono::steady_clock::now();
  auto r = AWAIT(etcd::Revision, dead->put("k", "v", 0, cb));
  ASSERT_FALSE(r);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_NE(r.error.find("etcd at 127.0.0.1:" + std::to_string(port) + " (--rdzv-endpoint)"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("connection refused: is etcd running at 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << r.error;

  // A port that accepts but never answers: the request's own bound, said in seconds.
  boost::asio::ip::tcp::acceptor silent(io_, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto silent_port = silent.local_endpoint().port();
  auto mute = make_client(io_, "127.0.0.1:" + std::to_string(silent_port), 1s);
  const auto t1 = std::chrono::steady_clock::now();
  auto r2 = AWAIT(etcd::RangeResult, mute->get("k", cb));
  ASSERT_FALSE(r2);
  EXPECT_LT(std::chrono::steady_clock::now() - t1, 3s);
  EXPECT_NE(r2.error.find("no answer within 1.0 s"), std::string::npos) << r2.error;
}

TEST_F(EtcdClientTest, FailsOverToTheNextEndpointWhenTheFirstIsDead) {
  const int dead_port = free_tcp_port();
  auto c = make_client(io_, "127.0.0.1:" + std::to_string(dead_port) + "," + etcd_.endpoint(0));
  ASSERT_TRUE(c);
  auto put = AWAIT(etcd::Revision, c->put("failover", "ok", 0, cb));
  ASSERT_TRUE(put) << put.error;
  EXPECT_EQ(c->transport().current(), 1u);  // the next request starts at the live one
  EXPECT_EQ(AWAIT(etcd::RangeResult, c->get("failover", cb))->kvs.at(0).value, "ok");
  // Every endpoint dead: one message listing each with its reason.
  etcd_.kill(0);
  auto none = AWAIT(etcd::RangeResult, c->get("failover", cb));
  ASSERT_FALSE(none);
  EXPECT_NE(none.error.find("failed on every etcd endpoint of --rdzv-endpoint (2)"), std::string::npos) << none.error;
  EXPECT_NE(none.error.find(etcd_.endpoint(0) + ": connection refused"), std::string::npos) << none.error;
}

TEST_F(EtcdClientTest, WatchDeliversPrefixEventsInOrderFromARevision) {
  auto base = AWAIT(etcd::RangeResult, client_->get_prefix("w/", cb));
  ASSERT_TRUE(base) << base.error;
  std::vector<etcd::WatchEvent> seen;
  std::string ended;
  auto watch = etcd::PrefixWatch::start(
      client_, "w/", base->revision + 1,
      [&](const std::vector<etcd::WatchEvent>& ev, etcd::Revision) { seen.insert(seen.end(), ev.begin(), ev.end()); },
      [&](const std::string& why) { ended = why; }, {});
  ASSERT_TRUE(AWAIT(etcd::Revision, client_->put("w/1", "a", 0, cb)));
  ASSERT_TRUE(AWAIT(etcd::Revision, client_->put("other", "x", 0, cb)));
  ASSERT_TRUE(AWAIT(etcd::Revision, client_->put("w/2", "b", 0, cb)));
  ASSERT_TRUE(AWAIT(std::int64_t, client_->erase("w/1", cb)));
  EXPECT_TRUE(run_until(io_, [&] { return seen.size() >= 3; }, 10s)) << ended;
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].kv.key, "w/1");
  EXPECT_EQ(seen[0].kv.value, "a");
  EXPECT_EQ(seen[1].kv.key, "w/2");
  EXPECT_EQ(seen[2].type, etcd::WatchEvent::Type::Delete);
  EXPECT_EQ(seen[2].kv.key, "w/1");
  watch->stop();
  run_for(io_, 200ms);
  EXPECT_EQ(ended, "");
}

class EtcdThreeMembersTest : public EtcdClientTest {
 protected:
  void SetUp() override { start(3); }
};

TEST_F(EtcdThreeMembersTest, KeepsWorkingWithOneMemberKilled) {
  ASSERT_TRUE(AWAIT(etcd::Revision, client_->put("cluster/before", "1", 0, cb)));
  std::vector<etcd::WatchEvent> seen;
  std::string ended;
  auto base = AWAIT(etcd::RangeResult, client_->get_prefix("cluster/", cb));
  ASSERT_TRUE(base);
  auto watch = etcd::PrefixWatch::start(
      client_, "cluster/", base->revision + 1,
      [&](const std::vector<etcd::WatchEvent>& ev, etcd::Revision) { seen.insert(seen.end(), ev.begin(), ev.end()); },
      [&](const std::string& why) { ended = why; }, {});
  ASSERT_TRUE(AWAIT(etcd::Revision, client_->put("cluster/w1", "1", 0, cb)));
  ASSERT_TRUE(run_until(io_, [&] { return seen.size() == 1; }, 10s)) << ended;

  etcd_.kill(static_cast<int>(client_->transport().current()));  // the member the client (and the watch) use
  // The two left keep a quorum; a request may meet the election that follows a leader's loss.
  Result<etcd::Revision> put = Result<etcd::Revision>::failure("not tried");
  const auto t0 = std::chrono::steady_clock::now();
  while (!put && std::chrono::steady_clock::now() - t0 < 15s) put = AWAIT(etcd::Revision, client_->put("cluster/after", "2", 0, cb));
  ASSERT_TRUE(put) << put.error;
  EXPECT_EQ(AWAIT(etcd::RangeResult, client_->get("cluster/before", cb))->kvs.at(0).value, "1");
  auto lease = AWAIT(etcd::LeaseGrant, client_->grant_lease(5s, cb));
  ASSERT_TRUE(lease) << lease.error;
  auto won = AWAIT(etcd::LeaderKey, client_->campaign("elect/leader", "me", lease->id, 10s, nullptr, cb));
  ASSERT_TRUE(won) << won.error;
  // The watch resumed on another member from the revision after the last it delivered.
  EXPECT_TRUE(run_until(io_, [&] { return seen.size() >= 2; }, 15s)) << ended;
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].kv.key, "cluster/after");
  EXPECT_GE(watch->streams_opened(), 2);
  watch->stop();
}

}  // namespace
}  // namespace ddplaunch::testing
