// Rendezvous robustness on 127.0.0.1: garbage, oversized, half-open, silent and slow peers are
// dropped while real nodes complete; lost nodes are noticed; nothing fires after close().
#include "../../rendezvous/testing/rendezvous_test_support.h"
#include "../../rendezvous/testing/raw_peer.h"
#include "ddplaunch/rendezvous/codec.h"

using namespace rdzv_test;

namespace {

struct ServerLog {
  std::vector<std::string> refused, lost;
  int plans = 0;
  ServerCallbacks callbacks() {
    ServerCallbacks cb;
    cb.plan = [this](std::uint64_t, const std::vector<NodeRecord>&) { ++plans; return JobPlan{}; };
    cb.on_refused = [this](const std::string& peer, const std::string& why) { refused.push_back(peer + ": " + why); };
    cb.on_node_lost = [this](const NodeRecord& r, const std::string& why) {
      lost.push_back("node " + std::to_string(r.node_rank) + " " + r.facts.hostname + ": " + why);
    };
    cb.on_progress = [this](int, int, const std::vector<std::string>&) { refused.push_back("progress"); };
    return cb;
  }
  int count(const std::string& part) const {
    int n = 0;
    for (auto& r : refused) n += contains(r, part) ? 1 : 0;
    return n;
  }
};

}  // namespace

TEST(RendezvousRobustness, MisbehavingPeersDroppedWhileRealNodesComplete) {
  boost::asio::io_context io;
  ServerLog log;
  auto o = fast_server(2);
  o.max_frame_bytes = 4096;
  Server server(io, o, log.callbacks());
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  std::vector<std::unique_ptr<RawPeer>> bad;
  for (int i = 0; i < 5; ++i) bad.push_back(std::make_unique<RawPeer>(server.port()));
  bad[0]->send_bytes(framed("hello"));                      // body without a newline
  bad[1]->send_bytes(framed("join\njob-a\nNaN\n\nx=1\n"));  // bad generation
  bad[2]->send_bytes(std::string("\x00\x10\x00\x00", 4));   // 1 MiB frame announced
  // bad[3]: half-open, sends nothing; bad[4]: slow sender, trickles a frame it never finishes
  bad[4]->send_bytes(std::string("\x00\x00", 2));
  auto a = make_client(io, fast_client(server.port()));
  auto b = make_client(io, fast_client(server.port()));
  a.client->join(facts("a"));
  b.client->join(facts("b"));
  int trickled = 0;
  ASSERT_TRUE(run_until(io, [&] {
    if (trickled < 20) { bad[4]->send_bytes(std::string(1, '\x01')); ++trickled; }
    for (auto& p : bad) p->poll();
    return !a.log->assignments.empty() && !b.log->assignments.empty();
  }));
  ASSERT_TRUE(run_until(io, [&] {
    for (auto& p : bad) { p->poll(); if (!p->closed_by_server) return false; }
    return true;
  }, 3000ms));
  EXPECT_EQ(a.log->assignments[0].world_size, 2);
  EXPECT_TRUE(a.log->losses.empty() && b.log->losses.empty());
  EXPECT_EQ(log.plans, 1);
  EXPECT_EQ(log.count("malformed message"), 2);
  EXPECT_EQ(log.count("exceeds the limit of 4096 bytes"), 1);
  EXPECT_EQ(log.count("handshake timeout"), 2);
  for (auto& p : bad) {  // each got a greeting (hello) before being dropped
    auto f = p->first_frame();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, "hello");
  }
}

TEST(RendezvousRobustness, SilentNodeLostWithinHeartbeatTimeout) {
  boost::asio::io_context io;
  ServerLog log;
  Server server(io, fast_server(1), log.callbacks());
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  RawPeer peer(server.port());
  ASSERT_TRUE(run_until(io, [&] { peer.poll(); return peer.first_frame().has_value(); }));
  Frame join;
  join.kind = "join";
  join.job_id = "job-a";
  join.fields = {{"protocol", std::to_string(kProtocolVersion)}, {"f.host", "mute"}, {"f.req", "-1"}, {"f.nproc", "1"}, {"f.gpus", "0"}};
  peer.send_bytes(encode_frame(join));
  ASSERT_TRUE(run_until(io, [&] { return log.plans == 1; }));
  auto assigned_at = Clock::now();
  // The peer now neither reads nor writes: no heartbeats, no acks.
  ASSERT_TRUE(run_until(io, [&] { return !log.lost.empty(); }, 3000ms));
  auto after = Clock::now() - assigned_at;
  EXPECT_GE(after, 350ms);                // it was the heartbeat timeout, not something else
  EXPECT_LE(after, 400ms + 50ms + 400ms);  // heartbeat_timeout + one interval + slack for a busy box
  EXPECT_TRUE(contains(log.lost[0], "node 0 mute") && contains(log.lost[0], "heartbeat timeout")) << log.lost[0];
}

TEST(RendezvousRobustness, ClosedConnectionIsNodeLostAndOthersStay) {
  boost::asio::io_context io;
  ServerLog log;
  Server server(io, fast_server(2), log.callbacks());
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  auto a = make_client(io, fast_client(server.port()));
  auto b = make_client(io, fast_client(server.port()));
  a.client->join(facts("a", 1, 0));
  b.client->join(facts("b", 1, 1));
  ASSERT_TRUE(run_until(io, [&] { return !a.log->assignments.empty() && !b.log->assignments.empty(); }));
  b.client.reset();  // node b's process goes away
  ASSERT_TRUE(run_until(io, [&] { return !log.lost.empty(); }, 2000ms));
  EXPECT_TRUE(contains(log.lost[0], "node 1 b")) << log.lost[0];
  run_for(io, 600ms);  // longer than the heartbeat timeout: a keeps its heartbeats
  EXPECT_EQ(log.lost.size(), 1u);
  EXPECT_TRUE(a.log->losses.empty());
}

TEST(RendezvousRobustness, ClientNoticesSilentMaster) {
  boost::asio::io_context io;
  // A "master" that greets and then goes silent: accept and send a hello by hand.
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  boost::asio::ip::tcp::socket peer(io);
  acceptor.async_accept(peer, [&](const boost::system::error_code& ec) {
    ASSERT_FALSE(ec);
    Frame hello;
    hello.kind = "hello";
    hello.fields = {{"nonce", "00"}, {"protocol", "1"}};
    boost::asio::write(peer, boost::asio::buffer(encode_frame(hello)));
  });
  auto c = make_client(io, fast_client(acceptor.local_endpoint().port()));
  c.client->join(facts("c"));
  auto start = Clock::now();
  ASSERT_TRUE(run_until(io, [&] { return !c.log->losses.empty(); }, 3000ms));
  EXPECT_LE(Clock::now() - start, 400ms + 50ms + 400ms);
  EXPECT_TRUE(contains(c.log->losses[0], "heartbeat timeout") &&
              contains(c.log->losses[0], "127.0.0.1:")) << c.log->losses[0];
}

TEST(RendezvousRobustness, NoCallbacksAfterClose) {
  boost::asio::io_context io;
  ServerLog log;
  auto server = std::make_unique<Server>(io, fast_server(2), log.callbacks());
  ASSERT_EQ(server->listen("127.0.0.1", 0), "");
  auto a = make_client(io, fast_client(server->port()));
  auto b = make_client(io, fast_client(server->port()));
  a.client->join(facts("a"));
  b.client->join(facts("b"));
  ASSERT_TRUE(run_until(io, [&] { return !a.log->assignments.empty() && !b.log->assignments.empty(); }));
  b.client->close();
  server->close();
  auto refused_before = log.refused.size();
  ASSERT_TRUE(run_until(io, [&] { return !a.log->losses.empty(); }, 2000ms));  // a sees the master go
  run_for(io, 500ms);
  EXPECT_TRUE(log.lost.empty());
  EXPECT_EQ(log.refused.size(), refused_before);
  EXPECT_TRUE(b.log->losses.empty() && b.log->refusals.empty());
  EXPECT_EQ(a.log->losses.size(), 1u);
  server.reset();  // destroying after close is fine, pending handlers hold what they need
  run_for(io, 50ms);
}
