// Rendezvous robustness on 127.0.0.1: garbage, oversized, half-open, silent and slow peers are
// dropped while real nodes complete; lost nodes are noticed; nothing fires after close().
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "../../../rendezvous/src/wire.h"
#include "rendezvous/rendezvous_test_support.h"
#include "rendezvous/raw_peer.h"
#include "ddplaunch/rendezvous/codec.h"

using namespace rdzv_test;

namespace {

struct ServerLog {
  std::vector<std::string> refused, lost;
  int plans = 0;
  ServerCallbacks callbacks() {
    ServerCallbacks cb;
    cb.plan = [this](Generation, const std::vector<NodeRecord>&) { ++plans; return test_plan(); };
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
  // No upper bound here (a busy machine delays timers): run_until's 3 s bounds the wait.
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

// Before a peer has joined it may send only a small frame; a real join with long names and
// many addresses still fits, and once joined the full limit applies again.
TEST(RendezvousRobustness, SmallFrameLimitBeforeJoinFullLimitAfter) {
  boost::asio::io_context io;
  ServerLog log;
  std::vector<Message> received;
  auto callbacks = log.callbacks();
  callbacks.on_message = [&](int, const Message& m) { received.push_back(m); };
  Server server(io, fast_server(1), callbacks);  // max_frame_bytes: the default 1 MiB
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  RawPeer stranger(server.port());
  stranger.send_bytes(std::string("\x00\x00\x50\x00", 4));  // announces 20 KiB: over 16 KiB before joining
  ASSERT_TRUE(run_until(io, [&] { stranger.poll(); return stranger.closed_by_server; }, 3000ms));
  EXPECT_EQ(log.count("exceeds the limit of 16384 bytes"), 1) << log.refused.size();

  auto big = facts(std::string(255, 'h'), 8);
  for (int i = 0; i < 64; ++i) big.addresses.push_back("fd00:1234:5678:9abc:def0:1234:5678:" + std::to_string(1000 + i));
  big.program_fingerprint = std::string(64, 'f');
  auto node = make_client(io, fast_client(server.port()));
  node.client->join(big);
  ASSERT_TRUE(run_until(io, [&] { return !node.log->assignments.empty(); }))
      << (node.log->losses.empty() ? "" : node.log->losses[0]);
  Message large{"report", 0, {{"tail", std::string(200000, 'x')}}};
  node.client->send(large);
  ASSERT_TRUE(run_until(io, [&] { return !received.empty(); }, 3000ms));
  EXPECT_EQ(received[0].fields["tail"].size(), 200000u);
  EXPECT_TRUE(node.log->losses.empty());
}

// `n` raw connections that never join, opened one after the other (accepted in order); a
// tally of what the server did with each one still open.
struct Strangers {
  std::vector<std::unique_ptr<RawPeer>> peers;
  struct Tally {
    int greeted = 0, closed = 0, waiting = 0;  // waiting: neither greeted nor closed
  };
  Strangers(boost::asio::io_context& io, int port, int n) {
    for (int i = 0; i < n; ++i) {
      peers.push_back(std::make_unique<RawPeer>(port));
      run_for(io, 5ms);
    }
  }
  Tally tally() {
    Tally t;
    for (auto& p : peers) {
      if (!p) continue;  // left
      p->poll();
      t.greeted += p->first_frame() ? 1 : 0;
      t.closed += p->closed_by_server ? 1 : 0;
      t.waiting += !p->first_frame() && !p->closed_by_server ? 1 : 0;
    }
    return t;
  }
};

// Over the cap of peers from one source address that have not joined, a new connection is
// closed at once: no greeting, no buffer.
TEST(RendezvousRobustness, UnjoinedConnectionsOverThePerAddressCapAreClosedAtOnce) {
  boost::asio::io_context io;
  ServerLog log;
  auto o = fast_server(1);
  o.handshake_timeout = 5000ms;  // the strangers stay for the whole test
  o.max_unjoined_per_address = 4;
  Server server(io, o, log.callbacks());
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  Strangers strangers(io, server.port(), 10);
  Strangers::Tally t;
  ASSERT_TRUE(run_until(io, [&] {
    t = strangers.tally();
    return t.greeted + t.closed == 10;
  }, 3000ms)) << t.greeted << " greeted, " << t.closed << " closed";
  EXPECT_EQ(t.greeted, 4);
  EXPECT_EQ(t.closed, 6);
  EXPECT_EQ(log.count("connections from 127.0.0.1 are already waiting"), 6);
}

// At the cap of unjoined peers from all sources together the listener pauses: the connections
// over it are neither greeted nor closed (they wait in the kernel's backlog), and each is
// greeted in turn as places free up, so a crowd of real nodes joins without retrying.
TEST(RendezvousRobustness, OverTheGlobalCapConnectionsWaitForAPlaceInsteadOfBeingClosed) {
  boost::asio::io_context io;
  ServerLog log;
  auto o = fast_server(1);
  o.handshake_timeout = 5000ms;  // a place frees only when the test closes a stranger
  o.max_unjoined_connections = 4;
  Server server(io, o, log.callbacks());
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  Strangers strangers(io, server.port(), 10);
  Strangers::Tally t;
  ASSERT_TRUE(run_until(io, [&] { return (t = strangers.tally()).greeted == 4; }, 3000ms)) << t.greeted << " greeted";
  run_for(io, 300ms);  // nothing more happens while the cap is full
  t = strangers.tally();
  EXPECT_EQ(t.greeted, 4);
  EXPECT_EQ(t.closed, 0) << "a connection over the global cap was closed instead of waiting";
  // Two greeted strangers leave: two waiting connections are greeted, the rest still wait.
  int left = 0;
  for (auto& p : strangers.peers)
    if (left < 2 && p && p->first_frame()) {
      p.reset();
      ++left;
    }
  ASSERT_TRUE(run_until(io, [&] { return (t = strangers.tally()).greeted == 4; }, 3000ms)) << t.greeted << " greeted";
  // 4 greeted now: the 2 that stayed and 2 of the waiting ones (those that left are gone).
  EXPECT_EQ(t.waiting, 4);
  EXPECT_EQ(t.closed, 0);
  EXPECT_EQ(log.count("already waiting to join"), 0) << "nobody is turned away at the global cap";
}

// A job far larger than the handshake cap: the connections over it wait ungreeted in the
// master's own queue, in arrival order (not in the kernel's backlog, which drops what it cannot
// hold), and every node joins without being turned away or retrying.
TEST(RendezvousRobustness, AJobLargerThanTheHandshakeCapJoinsThroughTheWaitingRoom) {
  boost::asio::io_context io;
  ServerLog log;
  constexpr int kNodes = 40;
  auto o = fast_server(kNodes);
  o.max_unjoined_connections = 4;
  o.max_unjoined_per_address = kNodes;  // every node here shares 127.0.0.1
  Server server(io, o, log.callbacks());
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  std::vector<TestClient> nodes;
  for (int i = 0; i < kNodes; ++i) {
    nodes.push_back(make_client(io, fast_client(server.port())));
    nodes.back().client->join(facts("n" + std::to_string(i)));
  }
  auto assigned = [&] {
    int n = 0;
    for (const auto& c : nodes) n += c.log->assignments.empty() ? 0 : 1;
    return n;
  };
  ASSERT_TRUE(run_until(io, [&] { return assigned() == kNodes; }, 10000ms)) << assigned() << " of " << kNodes;
  for (const auto& c : nodes) EXPECT_TRUE(c.log->losses.empty()) << c.log->losses.front();
  EXPECT_EQ(log.count("already waiting to join"), 0);
  EXPECT_EQ(server.joined_count(), kNodes);
}

// A node refused or closed before its greeting (master flooded or out of descriptors) tries
// again within its join timeout instead of giving up.
TEST(RendezvousRobustness, ClientRetriesWhenClosedBeforeGreeting) {
  boost::asio::io_context io;
  ServerLog log;
  auto o = fast_server(1);
  o.max_unjoined_per_address = 1;
  o.handshake_timeout = 600ms;
  Server server(io, o, log.callbacks());
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  auto squatter = std::make_unique<RawPeer>(server.port());  // holds the only slot until its timeout
  run_for(io, 20ms);
  auto node = make_client(io, fast_client(server.port()));
  node.client->join(facts("late"));
  ASSERT_TRUE(run_until(io, [&] { return !node.log->assignments.empty() || !node.log->losses.empty(); }, 5000ms));
  EXPECT_TRUE(node.log->losses.empty()) << node.log->losses[0];
  EXPECT_EQ(node.log->assignments.size(), 1u);
  EXPECT_GE(log.count("from one address before they prove"), 1) << "the node was turned away at least once first";
}

// A node restarted while its old connection is half-open gets its rank back once the old one
// has been silent a few heartbeat intervals; a live holder of the rank still refuses.
TEST(RendezvousRobustness, RestartedNodeReplacesItsSilentConnectionButNotALiveOne) {
  boost::asio::io_context io;
  ServerLog log;
  auto o = fast_server(3);
  o.silent_intervals_before_replace = 4;  // 200 ms: a live client on a busy machine stays well inside
  o.heartbeat_timeout = 5000ms;           // the silent holder is replaced, not timed out
  Server server(io, o, log.callbacks());
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  RawPeer old_self(server.port());
  ASSERT_TRUE(run_until(io, [&] { old_self.poll(); return old_self.first_frame().has_value(); }));
  Frame join;
  join.kind = "join";
  join.job_id = "job-a";
  join.fields = {{"protocol", std::to_string(kProtocolVersion)}, {"nonce", std::string(64, 'a')}};
  ddplaunch::rendezvous::detail::put_facts(join.fields, "f.", facts("n1", 1, 1));
  old_self.send_bytes(encode_frame(join));
  ASSERT_TRUE(run_until(io, [&] { return server.joined_count() == 1; }));
  run_for(io, 500ms);  // old_self answers no heartbeat: silent for ten intervals

  auto live = make_client(io, fast_client(server.port()));
  live.client->join(facts("n1", 1, 1));  // same host, same rank: replaces the silent one
  ASSERT_TRUE(run_until(io, [&] { return server.joined_count() == 1 && log.count("joined again as node rank 1"); }))
      << ::testing::PrintToString(log.refused) << ::testing::PrintToString(live.log->refusals);
  run_for(io, 200ms);
  auto duplicate = make_client(io, fast_client(server.port()));
  duplicate.client->join(facts("n1", 1, 1));  // the holder now answers heartbeats: refused
  ASSERT_TRUE(run_until(io, [&] { return !duplicate.log->refusals.empty(); }));
  EXPECT_TRUE(contains(duplicate.log->refusals[0], "duplicate node rank 1")) << duplicate.log->refusals[0];
  EXPECT_TRUE(live.log->losses.empty() && live.log->refusals.empty());
  old_self.poll();
  EXPECT_TRUE(old_self.closed_by_server);
}
