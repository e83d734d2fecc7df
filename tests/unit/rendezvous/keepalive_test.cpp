// The keep-alive on real sockets, seen from a relay between a real node and a real master:
// any frame tells the other side it is alive, so a side that has just sent something sends no
// heartbeat (at rest a large job's rank reports are the nodes' heartbeats); a side with
// nothing to say still sends them at its pace, and neither side takes the other for lost.
#include <algorithm>

#include "rendezvous/rendezvous_test_support.h"
#include "rendezvous/tcp_relay.h"

using namespace rdzv_test;

namespace {

constexpr auto kInterval = 300ms;

struct Job {
  boost::asio::io_context io;
  std::unique_ptr<Server> server;
  std::vector<std::pair<int, Message>> messages;
  std::unique_ptr<Relay> relay;
  TestClient node;

  Job() {
    ServerOptions o = fast_server(1);
    o.heartbeat_interval = kInterval;
    o.heartbeat_timeout = 10 * kInterval;
    ServerCallbacks cb;
    cb.plan = [](Generation, const std::vector<NodeRecord>&) {
      JobPlan p;
      p.worker_master_addr = "127.0.0.1";
      p.worker_master_port = 29500;
      p.init_deadline_s = 60;
      return p;
    };
    cb.on_message = [this](int rank, const Message& m) { messages.emplace_back(rank, m); };
    server = std::make_unique<Server>(io, o, std::move(cb));
    EXPECT_EQ(server->listen("127.0.0.1", 0), "");
    relay = std::make_unique<Relay>(server->port());
    ClientOptions c = fast_client(static_cast<std::uint16_t>(relay->port()));
    c.heartbeat_interval = kInterval;
    c.heartbeat_timeout = 10 * kInterval;
    node = make_client(io, c);
    node.client->join(facts("n0"));
  }

  // Frames of `kind` that crossed in `kinds` from index `from` on.
  static long count(const std::vector<std::string>& kinds, std::size_t from, const std::string& kind) {
    return std::count(kinds.begin() + static_cast<long>(std::min(from, kinds.size())), kinds.end(), kind);
  }
  // Runs for `how_long`, calling `every_tick` each `tick` (bounded: how_long / tick turns).
  void run_ticking(std::chrono::milliseconds how_long, std::chrono::milliseconds tick,
                   const std::function<void()>& every_tick) {
    for (auto turns = how_long / tick; turns > 0; --turns) {
      if (every_tick) every_tick();
      run_for(io, tick);
    }
  }
};

Message launcher_message(const std::string& type) {
  Message m;
  m.type = type;
  return m;
}

TEST(RendezvousKeepalive, ANodeThatSpeaksMoreOftenThanItsPaceSendsNoHeartbeatAndOneThatIsQuietDoes) {
  Job job;
  ASSERT_TRUE(run_until(job.io, [&] { return !job.node.log->assignments.empty(); }))
      << (job.node.log->losses.empty() ? "" : job.node.log->losses.front()) << " relay saw "
      << job.relay->kinds_from_node().size() << "/" << job.relay->kinds_from_master().size();
  // Quiet: heartbeats at the pace (10 intervals: about 10, more than 5 whatever the load).
  std::size_t from = job.relay->kinds_from_node().size();
  run_for(job.io, 10 * kInterval);
  EXPECT_GE(Job::count(job.relay->kinds_from_node(), from, "hb"), 5);
  // Speaking every 30 ms (ten times an interval): its messages are its heartbeats.
  from = job.relay->kinds_from_node().size();
  job.run_ticking(10 * kInterval, 30ms, [&] { job.node.client->send(launcher_message("report")); });
  const auto kinds = job.relay->kinds_from_node();
  EXPECT_GE(Job::count(kinds, from, "msg"), 50);
  EXPECT_EQ(Job::count(kinds, from, "hb"), 0) << "a node that has just sent a frame owes no heartbeat";
  // And the master never took it for lost: it still holds the node and heard every message.
  run_for(job.io, 3 * kInterval);
  EXPECT_TRUE(job.node.log->losses.empty()) << job.node.log->losses.front();
  EXPECT_EQ(job.server->joined_count(), 1);
  EXPECT_GE(job.messages.size(), 50u);
}

TEST(RendezvousKeepalive, TheMasterSendsNoHeartbeatToANodeItHasJustToldSomething) {
  Job job;
  ASSERT_TRUE(run_until(job.io, [&] { return !job.node.log->assignments.empty(); }));
  std::size_t from = job.relay->kinds_from_master().size();
  run_for(job.io, 10 * kInterval);
  EXPECT_GE(Job::count(job.relay->kinds_from_master(), from, "hb"), 5);
  from = job.relay->kinds_from_master().size();
  job.run_ticking(10 * kInterval, 30ms, [&] { job.server->send(0, launcher_message("order")); });
  const auto kinds = job.relay->kinds_from_master();
  EXPECT_GE(Job::count(kinds, from, "msg"), 50);
  EXPECT_EQ(Job::count(kinds, from, "hb"), 0) << "a node that has just heard from the master needs no heartbeat";
  run_for(job.io, 3 * kInterval);
  EXPECT_TRUE(job.node.log->losses.empty()) << job.node.log->losses.front();
  EXPECT_GE(job.node.log->messages.size(), 50u);
}

}  // namespace
