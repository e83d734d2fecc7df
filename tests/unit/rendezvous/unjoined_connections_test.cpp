// The rendezvous server's bounds on connections that have not joined yet, on real loopback
// sockets: the handshake cap (global and per address), the wait for a place within the job's
// room, paused listeners, skipping a connection its node has left, and closing.
#include <gtest/gtest.h>

#include <poll.h>

#include <memory>
#include <string>
#include <vector>
#include <utility>  // before Asio (Boost 1.74 + g++ 12)

#include <boost/asio.hpp>

#include "../../../rendezvous/src/server_peer.h"
#include "../../../rendezvous/src/unjoined_connections.h"

namespace ddplaunch::rendezvous {
namespace {

using tcp = boost::asio::ip::tcp;

// A listener on 127.0.0.1 and the client ends of the connections it accepted.
struct Loopback {
  boost::asio::io_context io;
  tcp::acceptor listener{io, {boost::asio::ip::make_address("127.0.0.1"), 0}};
  std::vector<std::unique_ptr<tcp::socket>> clients;

  tcp::socket accept_one() {
    clients.push_back(std::make_unique<tcp::socket>(io));
    clients.back()->connect(listener.local_endpoint());
    return listener.accept();
  }
  std::shared_ptr<ServerPeer> peer() {
    auto p = std::make_shared<ServerPeer>();
    p->conn = std::make_shared<detail::Connection>(accept_one(), 1 << 16);
    return p;
  }
};

struct Recorded {
  int greeted = 0;
  int resumed = 0;
};

UnjoinedConnections::Hooks recording(Recorded& r) {
  return {[&r](tcp::socket, const tcp::endpoint&) { ++r.greeted; }, [&r](tcp::acceptor&) { ++r.resumed; }};
}

TEST(UnjoinedConnections, AtTheGlobalCapNewConnectionsWaitWhileTheJobHasRoomThenTheListenersPause) {
  Loopback net;
  Recorded seen;
  // Two handshake places; the job holds four connections when complete. As in the server,
  // greeting a connection starts its handshake.
  UnjoinedConnections* room = nullptr;
  UnjoinedConnections unjoined({.max_handshaking = 2, .max_per_address = 16, .places = 4},
                               {[&](tcp::socket, const tcp::endpoint&) {
                                  ++seen.greeted;
                                  room->begin_handshake(net.peer());
                                },
                                [&](tcp::acceptor&) { ++seen.resumed; }});
  room = &unjoined;
  auto first = net.peer(), second = net.peer();
  EXPECT_EQ(unjoined.over_cap("127.0.0.1"), "");
  tcp::socket early = net.accept_one();
  EXPECT_FALSE(unjoined.wait_for_a_place(early, 0)) << "a place is free: greeted at once";
  unjoined.begin_handshake(first);
  unjoined.begin_handshake(second);
  EXPECT_NE(unjoined.over_cap("127.0.0.1").find("2 connections are already waiting to join"), std::string::npos);
  EXPECT_FALSE(unjoined.pause_at_cap(net.listener, 0)) << "the job still has room: accept into the waiting room";
  tcp::socket third = net.accept_one(), fourth = net.accept_one(), fifth = net.accept_one();
  EXPECT_TRUE(unjoined.wait_for_a_place(third, 0));
  EXPECT_TRUE(unjoined.wait_for_a_place(fourth, 0));
  EXPECT_FALSE(unjoined.wait_for_a_place(fifth, 0)) << "no room left in the job: not kept waiting";
  EXPECT_TRUE(unjoined.pause_at_cap(net.listener, 0));
  // A place frees: the longest-waiting connection is greeted, then the listener goes on.
  unjoined.end_handshake(first.get());
  EXPECT_EQ(seen.greeted, 1);
  EXPECT_EQ(seen.resumed, 1);
  EXPECT_EQ(unjoined.handshaking(), 2u) << "one place freed, one taken by the greeted connection";
  // Still at the cap: the listener pauses again (one connection waits, the job has room for it only).
  EXPECT_TRUE(unjoined.pause_at_cap(net.listener, 1));
}

TEST(UnjoinedConnections, JoinedNodesCountAgainstTheRoom) {
  Loopback net;
  Recorded seen;
  UnjoinedConnections unjoined({.max_handshaking = 1, .max_per_address = 16, .places = 3}, recording(seen));
  unjoined.begin_handshake(net.peer());
  tcp::socket waiting = net.accept_one();
  EXPECT_FALSE(unjoined.wait_for_a_place(waiting, 2)) << "two joined + one in its handshake fill a job of three";
  EXPECT_TRUE(unjoined.wait_for_a_place(waiting, 1));
}

TEST(UnjoinedConnections, OneAddressMayHoldOnlyItsShareOfHandshakes) {
  Loopback net;
  Recorded seen;
  UnjoinedConnections unjoined({.max_handshaking = 8, .max_per_address = 2, .places = 8}, recording(seen));
  auto first = net.peer();
  unjoined.begin_handshake(first);
  EXPECT_EQ(unjoined.over_cap("127.0.0.1"), "");
  unjoined.begin_handshake(net.peer());
  EXPECT_NE(unjoined.over_cap("127.0.0.1").find("2 connections from 127.0.0.1"), std::string::npos);
  EXPECT_EQ(unjoined.over_cap("127.0.0.2"), "") << "another address still has its share";
  unjoined.end_handshake(first.get());
  EXPECT_EQ(unjoined.over_cap("127.0.0.1"), "") << "a handshake that ended gives its address's place back";
  unjoined.end_handshake(first.get());
  EXPECT_EQ(unjoined.over_cap("127.0.0.1"), "") << "ending it twice gives back nothing more";
  unjoined.begin_handshake(net.peer());
  EXPECT_NE(unjoined.over_cap("127.0.0.1").find("2 connections from 127.0.0.1"), std::string::npos);
}

// One handshake place, held by `holder`; one connection waits for it. Whether its node left
// it is asked after any wait unless `ask_if_left_after` says otherwise.
struct OnePlaceHeld {
  explicit OnePlaceHeld(std::chrono::milliseconds ask_if_left_after = std::chrono::milliseconds(0))
      : unjoined{{.max_handshaking = 1, .max_per_address = 16, .places = 4, .ask_if_left_after = ask_if_left_after},
                 recording(seen)} {
    unjoined.begin_handshake(holder);
    tcp::socket waiting = net.accept_one();
    waiting_fd = waiting.native_handle();
    EXPECT_TRUE(unjoined.wait_for_a_place(waiting, 0));
  }
  Loopback net;
  Recorded seen;
  UnjoinedConnections unjoined;
  std::shared_ptr<ServerPeer> holder = net.peer();
  int waiting_fd = -1;
};

TEST(UnjoinedConnections, AConnectionItsNodeLeftWhileWaitingIsNotGreeted) {
  OnePlaceHeld held;
  auto& [net, seen, unjoined, holder, left_fd] = held;
  net.clients.back()->close();  // the node gave up the waiting connection
  pollfd end_of_stream{left_fd, POLLIN, 0};
  ASSERT_EQ(::poll(&end_of_stream, 1, 5000), 1) << "the close did not reach the master's end";
  tcp::socket stays = net.accept_one();
  ASSERT_TRUE(unjoined.wait_for_a_place(stays, 0));
  // The place frees: the closed one is skipped, the one behind it greeted.
  unjoined.end_handshake(holder.get());
  EXPECT_EQ(seen.greeted, 1);
}

// A brief wait costs no system call: its node cannot have given the connection up yet (it
// would only after its connect timeout), so it is greeted without asking.
TEST(UnjoinedConnections, AConnectionThatWaitedBrieflyIsGreetedWithoutAskingWhetherItWasLeft) {
  OnePlaceHeld held(std::chrono::hours(1));
  auto& [net, seen, unjoined, holder, left_fd] = held;
  net.clients.back()->close();
  pollfd end_of_stream{left_fd, POLLIN, 0};
  ASSERT_EQ(::poll(&end_of_stream, 1, 5000), 1) << "the close did not reach the master's end";
  unjoined.end_handshake(holder.get());
  EXPECT_EQ(seen.greeted, 1) << "not asked: greeted (the server then reads its end and drops it)";
}

TEST(UnjoinedConnections, ClosingHandsBackTheHandshakesAndGreetsNobodyAfterwards) {
  OnePlaceHeld held;
  auto& [net, seen, unjoined, holder, waiting_fd] = held;
  ASSERT_TRUE(unjoined.pause_at_cap(net.listener, 3));
  const auto handed_back = unjoined.close();
  ASSERT_EQ(handed_back.size(), 1u);
  EXPECT_EQ(handed_back[0], holder);
  EXPECT_EQ(unjoined.handshaking(), 0u);
  unjoined.end_handshake(holder.get());
  EXPECT_EQ(seen.greeted, 0);
  EXPECT_EQ(seen.resumed, 0);
}

// One sweep serves every handshake's timeout: it finds those greeted by a cutoff, and when
// the next one is due.
TEST(UnjoinedConnections, TheSweepFindsTheHandshakesGreetedByACutoffAndTheEarliestGreeting) {
  Loopback net;
  Recorded seen;
  UnjoinedConnections unjoined({.max_handshaking = 8, .max_per_address = 8, .places = 8}, recording(seen));
  EXPECT_FALSE(unjoined.earliest_greeting()) << "no one in a handshake: nothing to wait for";
  const auto t0 = std::chrono::steady_clock::now();
  auto old_one = net.peer(), newer = net.peer();
  old_one->hello_sent = t0;
  newer->hello_sent = t0 + std::chrono::seconds(2);
  unjoined.begin_handshake(newer);
  unjoined.begin_handshake(old_one);
  ASSERT_TRUE(unjoined.earliest_greeting());
  EXPECT_EQ(*unjoined.earliest_greeting(), t0);
  EXPECT_TRUE(unjoined.greeted_by(t0 - std::chrono::milliseconds(1)).empty());
  const auto due = unjoined.greeted_by(t0);
  ASSERT_EQ(due.size(), 1u) << "greeted exactly at the cutoff: due";
  EXPECT_EQ(due.front(), old_one);
  EXPECT_EQ(unjoined.greeted_by(t0 + std::chrono::seconds(5)).size(), 2u);
  unjoined.end_handshake(old_one.get());  // joined: no longer the sweep's
  EXPECT_EQ(*unjoined.earliest_greeting(), t0 + std::chrono::seconds(2));
  EXPECT_EQ(unjoined.greeted_by(t0 + std::chrono::seconds(5)).size(), 1u);
}

}  // namespace
}  // namespace ddplaunch::rendezvous
