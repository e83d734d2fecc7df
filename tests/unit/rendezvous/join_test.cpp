// Rendezvous join flows on 127.0.0.1: rank assignment and offsets, requested ranks, refusals
// with reasons, plan refusal, join timeout, generations, messages both ways, status query.
#include <thread>

#include "rendezvous/rendezvous_test_support.h"

using namespace rdzv_test;

namespace {

struct Harness {
  boost::asio::io_context io;
  std::unique_ptr<Server> server;
  std::vector<std::pair<Generation, std::vector<NodeRecord>>> plans;
  std::vector<std::pair<int, Message>> messages;
  std::vector<std::string> refused, join_timeouts;
  std::vector<std::string> progress_missing;
  int progress_calls = 0;
  JobPlan plan_reply;

  explicit Harness(ServerOptions o) {
    plan_reply.worker_master_addr = "10.1.0.5";
    plan_reply.worker_master_port = 29500;
    plan_reply.init_deadline_s = 42.5;
    plan_reply.run_id = "run-7";
    ServerCallbacks cb;
    cb.plan = [this](Generation g, const std::vector<NodeRecord>& nodes) {
      plans.emplace_back(g, nodes);
      return plan_reply;
    };
    cb.on_message = [this](int r, const Message& m) { messages.emplace_back(r, m); };
    cb.on_refused = [this](const std::string& peer, const std::string& why) { refused.push_back(peer + ": " + why); };
    cb.on_progress = [this](int, int, const std::vector<std::string>& missing) {
      ++progress_calls;
      progress_missing = missing;
    };
    cb.on_join_timeout = [this](const JoinTimeout& t) {  // decides like the launcher: give up
      for (auto& m : t.missing) join_timeouts.push_back(m);
      server->abort(t.what);
    };
    cb.status_text = [] { return std::string("2 of 2 nodes running\nline two"); };
    server = std::make_unique<Server>(io, std::move(o), std::move(cb));
    std::string err = server->listen("127.0.0.1", 0);
    EXPECT_EQ(err, "");
  }
  std::uint16_t port() const { return server->port(); }
};

// Nodes "a" and "b" asking to join h's master (their assignments follow on h's loop).
struct NodesAB {
  TestClient a, b;
};
NodesAB join_a_and_b(Harness& h) {
  NodesAB nodes{make_client(h.io, fast_client(h.port())), make_client(h.io, fast_client(h.port()))};
  nodes.a.client->join(facts("a"));
  nodes.b.client->join(facts("b"));
  return nodes;
}

}  // namespace

TEST(RendezvousJoin, FourNodesGetOffsetsInJoinOrderWithHeterogeneousNproc) {
  Harness h(fast_server(4));
  const int nprocs[4] = {2, 4, 1, 8};
  std::vector<TestClient> clients;
  for (int i = 0; i < 4; ++i) {  // one at a time, so the join order is known
    clients.push_back(make_client(h.io, fast_client(h.port())));
    clients.back().client->join(facts("host" + std::to_string(i), nprocs[i]));
    if (i < 3) {
      ASSERT_TRUE(run_until(h.io, [&] { return h.server->joined_count() == i + 1; }));
    }
  }
  ASSERT_TRUE(run_until(h.io, [&] {
    for (auto& c : clients) if (c.log->assignments.empty()) return false;
    return true;
  }));
  ASSERT_EQ(h.plans.size(), 1u);
  EXPECT_EQ(h.plans[0].first, Generation{0});
  ASSERT_EQ(h.plans[0].second.size(), 4u);
  const int offsets[4] = {0, 2, 6, 7};
  for (int i = 0; i < 4; ++i) {
    const Assignment& a = clients[i].log->assignments.at(0);
    EXPECT_EQ(a.node_rank, i);
    EXPECT_EQ(a.node_count, 4);
    EXPECT_EQ(a.rank_offset, offsets[i]);
    EXPECT_EQ(a.world_size, 15);
    EXPECT_EQ(a.generation, Generation{0});
    EXPECT_EQ(a.worker_master_addr, "10.1.0.5");
    EXPECT_EQ(a.worker_master_port, 29500);
    EXPECT_DOUBLE_EQ(a.init_deadline_s, 42.5);
    EXPECT_EQ(a.run_id, "run-7");
    ASSERT_EQ(a.nodes.size(), 4u);
    EXPECT_EQ(a.nodes[i].facts.hostname, "host" + std::to_string(i));
    EXPECT_EQ(a.nodes[3].facts.nproc, 8);
    EXPECT_EQ(a.nodes[1].facts.addresses, (std::vector<std::string>{"127.0.0.1", "10.0.0.1"}));
    EXPECT_EQ(a.nodes[2].node_rank, 2);
    EXPECT_EQ(h.plans[0].second[i].facts.hostname, "host" + std::to_string(i));
    EXPECT_EQ(h.plans[0].second[i].observed_address, "127.0.0.1");
    EXPECT_GE(h.plans[0].second[i].rtt_ms, 0.0);
    EXPECT_EQ(clients[i].client->local_address(), "127.0.0.1");
  }
}

TEST(RendezvousJoin, NodeListOmittedAboveMaxListedNodes) {
  auto o = fast_server(2);
  o.max_listed_nodes = 1;
  Harness h(o);
  auto [a, b] = join_a_and_b(h);
  ASSERT_TRUE(run_until(h.io, [&] { return !a.log->assignments.empty() && !b.log->assignments.empty(); }));
  EXPECT_TRUE(a.log->assignments[0].nodes.empty());
  EXPECT_EQ(a.log->assignments[0].world_size, 2);
}

// A job larger than the master's heartbeat budget: the master stretches its pace (here 1
// heartbeat a second for 2 nodes: every 2 s, timeout 16 s) and says so in each heartbeat; the
// nodes, started with a 400 ms timeout, follow it instead of taking the slower master for lost.
TEST(RendezvousJoin, NodesFollowTheStretchedPaceTheMasterAnnounces) {
  auto o = fast_server(2);
  o.keepalive_budget_per_s = 1;
  Harness h(o);
  auto [a, b] = join_a_and_b(h);
  ASSERT_TRUE(run_until(h.io, [&] { return !a.log->assignments.empty() && !b.log->assignments.empty(); }));
  run_for(h.io, 2500ms);  // more than six of the nodes' own timeouts
  EXPECT_TRUE(a.log->losses.empty()) << a.log->losses.front();
  EXPECT_TRUE(b.log->losses.empty()) << b.log->losses.front();
  EXPECT_EQ(h.server->joined_count(), 2);
  EXPECT_TRUE(h.refused.empty());
}

TEST(RendezvousJoin, RequestedRanksRespectedAndDuplicateRefusedWithHolder) {
  Harness h(fast_server(4));
  std::vector<TestClient> c;
  const int requested[4] = {2, -1, 0, -1};
  for (int i = 0; i < 4; ++i) {
    c.push_back(make_client(h.io, fast_client(h.port())));
    c.back().client->join(facts("node" + std::to_string(i), 1, requested[i]));
    ASSERT_TRUE(run_until(h.io, [&] { return h.server->joined_count() == i + 1 || !c.back().log->assignments.empty(); }));
    if (i == 0) {  // a second node asking for rank 2 is refused, naming who holds it
      auto dup = make_client(h.io, fast_client(h.port()));
      dup.client->join(facts("intruder", 1, 2));
      ASSERT_TRUE(run_until(h.io, [&] { return !dup.log->refusals.empty(); }));
      EXPECT_TRUE(contains(dup.log->refusals[0], "duplicate node rank 2")) << dup.log->refusals[0];
      EXPECT_TRUE(contains(dup.log->refusals[0], "'node0'")) << dup.log->refusals[0];
      EXPECT_TRUE(contains(dup.log->refusals[0], "'intruder'")) << dup.log->refusals[0];
      EXPECT_EQ(h.server->joined_count(), 1);
    }
  }
  ASSERT_TRUE(run_until(h.io, [&] {
    for (auto& x : c) if (x.log->assignments.empty()) return false;
    return true;
  }));
  EXPECT_EQ(c[0].log->assignments[0].node_rank, 2);
  EXPECT_EQ(c[1].log->assignments[0].node_rank, 1);  // lowest free, in join order
  EXPECT_EQ(c[2].log->assignments[0].node_rank, 0);
  EXPECT_EQ(c[3].log->assignments[0].node_rank, 3);
  EXPECT_EQ(h.refused.size(), 1u);
}

TEST(RendezvousJoin, RefusalsCarryHumanReasons) {
  auto o = fast_server(3);
  o.token = "s3cret";
  o.launcher_version = "0.1.0";
  Harness h(o);
  auto wrong_job_options = fast_client(h.port(), "job-b");
  wrong_job_options.token = "s3cret";
  auto wrong_job = make_client(h.io, wrong_job_options);
  auto co = fast_client(h.port());
  co.token = "wrong";
  auto bad_token = make_client(h.io, co);
  co.token = "";
  auto no_token = make_client(h.io, co);
  co.token = "s3cret";
  co.protocol_version = 99;
  auto old_protocol = make_client(h.io, co);
  co.protocol_version = kProtocolVersion;
  auto old_launcher = make_client(h.io, co);
  auto out_of_range = make_client(h.io, co);
  wrong_job.client->join(facts("w"));
  bad_token.client->join(facts("t"));
  no_token.client->join(facts("n"));
  old_protocol.client->join(facts("p"));
  auto lf = facts("l");
  lf.launcher_version = "0.0.9";
  old_launcher.client->join(lf);
  out_of_range.client->join(facts("r", 1, 7));
  std::vector<TestClient*> all = {&wrong_job, &bad_token, &no_token, &old_protocol, &old_launcher, &out_of_range};
  ASSERT_TRUE(run_until(h.io, [&] {
    for (auto* c : all) if (c->log->refusals.empty()) return false;
    return true;
  }));
  auto r = [](TestClient& c) { return c.log->refusals.at(0); };
  // The node's own job id is named, the master's never (a refusal tells a stranger nothing).
  EXPECT_TRUE(contains(r(wrong_job), "'job-b'") && !contains(r(wrong_job), "job-a") &&
              contains(r(wrong_job), "--job-id")) << r(wrong_job);
  EXPECT_TRUE(contains(r(bad_token), "authentication failed")) << r(bad_token);
  EXPECT_TRUE(contains(r(no_token), "requires a rendezvous token")) << r(no_token);
  EXPECT_TRUE(contains(r(old_protocol), "version 99") && contains(r(old_protocol), "version " + std::to_string(kProtocolVersion)))
      << r(old_protocol);
  EXPECT_TRUE(contains(r(old_launcher), "'0.0.9'") && contains(r(old_launcher), "'0.1.0'")) << r(old_launcher);
  EXPECT_TRUE(contains(r(out_of_range), "node rank 7") && contains(r(out_of_range), "3 nodes")) << r(out_of_range);
  EXPECT_EQ(h.server->joined_count(), 0);
  EXPECT_EQ(h.refused.size(), 6u);
  for (auto* c : all) EXPECT_TRUE(c->log->losses.empty());
}

TEST(RendezvousJoin, TokenAcceptedAndTooManyNodesRefused) {
  auto o = fast_server(1);
  o.token = "s3cret";
  Harness h(o);
  auto co = fast_client(h.port());
  co.token = "s3cret";
  auto first = make_client(h.io, co);
  first.client->join(facts("first"));
  ASSERT_TRUE(run_until(h.io, [&] { return !first.log->assignments.empty(); }));
  auto extra = make_client(h.io, co);
  extra.client->join(facts("extra"));
  ASSERT_TRUE(run_until(h.io, [&] { return !extra.log->refusals.empty(); }));
  EXPECT_TRUE(contains(extra.log->refusals[0], "too many nodes") &&
              contains(extra.log->refusals[0], "expects 1")) << extra.log->refusals[0];
  EXPECT_TRUE(first.log->losses.empty());
}

TEST(RendezvousJoin, PlanRefusalReachesEveryNode) {
  Harness h(fast_server(2));
  h.plan_reply.refusal = "node 1 sees 4 GPUs but --nproc-per-node is 8";
  auto [a, b] = join_a_and_b(h);
  ASSERT_TRUE(run_until(h.io, [&] { return !a.log->refusals.empty() && !b.log->refusals.empty(); }));
  EXPECT_EQ(a.log->refusals[0], h.plan_reply.refusal);
  EXPECT_EQ(b.log->refusals[0], h.plan_reply.refusal);
  EXPECT_EQ(h.server->port(), 0);  // the server stopped
}

TEST(RendezvousJoin, JoinTimeoutNamesMissingRanks) {
  auto o = fast_server(3);
  o.join_timeout = 400ms;
  Harness h(o);
  auto a = make_client(h.io, fast_client(h.port()));
  a.client->join(facts("a", 1, 0));
  ASSERT_TRUE(run_until(h.io, [&] { return !a.log->losses.empty(); }, 3000ms));
  EXPECT_EQ(h.join_timeouts, (std::vector<std::string>{"node rank 1", "node rank 2"}));
  EXPECT_GT(h.progress_calls, 0);
  EXPECT_GT(a.log->progress_calls, 0);
  EXPECT_EQ(a.log->last_missing, (std::vector<std::string>{"node rank 1", "node rank 2"}));
  EXPECT_TRUE(contains(a.log->losses[0], "node rank 1, node rank 2") ||
              contains(a.log->losses[0], "node rank 1\nnode rank 2")) << a.log->losses[0];
  EXPECT_TRUE(contains(a.log->losses[0], "1 of 3")) << a.log->losses[0];
}

TEST(RendezvousJoin, ProgressCountsUnassignedNodes) {
  Harness h(fast_server(3));
  auto a = make_client(h.io, fast_client(h.port()));
  a.client->join(facts("a"));
  ASSERT_TRUE(run_until(h.io, [&] { return a.log->progress_calls > 0; }));
  EXPECT_EQ(a.log->last_missing, (std::vector<std::string>{"2 more nodes (ranks unassigned)"}));
  EXPECT_EQ(h.progress_missing, a.log->last_missing);
}

TEST(RendezvousJoin, ClientReportsUnreachableMasterWithAddress) {
  boost::asio::io_context io;
  std::uint16_t port;
  {  // a port nobody listens on
    boost::asio::ip::tcp::acceptor probe(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }
  auto o = fast_client(port);
  o.join_timeout = 300ms;
  auto c = make_client(io, o);
  c.client->join(facts("lonely"));
  ASSERT_TRUE(run_until(io, [&] { return !c.log->losses.empty(); }, 3000ms));
  EXPECT_TRUE(contains(c.log->losses[0], "could not connect") &&
              contains(c.log->losses[0], "127.0.0.1:" + std::to_string(port))) << c.log->losses[0];
}

TEST(RendezvousJoin, ListenReportsAddressInUse) {
  Harness h(fast_server(1));
  boost::asio::io_context io;
  Server other(io, fast_server(1), {});
  std::string err = other.listen("127.0.0.1", h.port());
  EXPECT_TRUE(contains(err, "EADDRINUSE") && contains(err, std::to_string(h.port()))) << err;
}

// The launcher starts a generation while carrying out its own decisions: begin_generation
// never asks it for the plan before returning, even when every node is ready already; the
// plan follows from the event loop.
TEST(RendezvousJoin, BeginGenerationAsksForThePlanOnlyAfterItReturned) {
  Harness h(fast_server(2));
  auto [a, b] = join_a_and_b(h);
  ASSERT_TRUE(run_until(h.io, [&] { return !a.log->assignments.empty() && !b.log->assignments.empty(); }));
  a.client->rejoin(Generation{1});
  b.client->rejoin(Generation{1});
  run_for(h.io, 100ms);  // both ready for generation 1 before it begins
  ASSERT_EQ(h.plans.size(), 1u);
  h.server->begin_generation(Generation{1});
  EXPECT_EQ(h.plans.size(), 1u) << "not asked inside begin_generation";
  ASSERT_TRUE(run_until(h.io, [&] { return a.log->assignments.size() == 2 && b.log->assignments.size() == 2; }));
  ASSERT_EQ(h.plans.size(), 2u);
  EXPECT_EQ(h.plans[1].first, Generation{1});
  EXPECT_EQ(b.log->assignments[1].generation, Generation{1});
}

TEST(RendezvousJoin, RestartGenerationGivesSecondAssignment) {
  Harness h(fast_server(2));
  std::vector<TestClient> c;
  for (int i = 0; i < 2; ++i) {
    c.push_back(make_client(h.io, fast_client(h.port())));
    c.back().client->join(facts("n" + std::to_string(i), 2));
  }
  ASSERT_TRUE(run_until(h.io, [&] { return !c[0].log->assignments.empty() && !c[1].log->assignments.empty(); }));
  int rank0 = c[0].log->assignments[0].node_rank;
  h.server->broadcast(Message{"restart", Generation{1}, {{"why", "init failed"}}});
  h.server->begin_generation(Generation{1});
  ASSERT_TRUE(run_until(h.io, [&] { return !c[0].log->messages.empty() && !c[1].log->messages.empty(); }));
  EXPECT_EQ(c[0].log->messages[0].type, "restart");
  EXPECT_EQ(c[0].log->messages[0].generation, Generation{1});
  EXPECT_EQ(c[0].log->messages[0].fields.at("why"), "init failed");
  run_for(h.io, 100ms);
  EXPECT_EQ(h.plans.size(), 1u);  // nobody rejoined yet
  c[0].client->rejoin(Generation{1});
  run_for(h.io, 100ms);
  EXPECT_EQ(h.plans.size(), 1u);  // one of two
  c[1].client->rejoin(Generation{1});
  ASSERT_TRUE(run_until(h.io, [&] { return c[0].log->assignments.size() == 2 && c[1].log->assignments.size() == 2; }));
  ASSERT_EQ(h.plans.size(), 2u);
  EXPECT_EQ(h.plans[1].first, Generation{1});
  EXPECT_EQ(c[0].log->assignments[1].generation, Generation{1});
  EXPECT_EQ(c[0].log->assignments[1].node_rank, rank0);  // node ranks are stable across restarts
  EXPECT_EQ(c[1].log->assignments[1].world_size, 4);
}

TEST(RendezvousJoin, MessagesBothWays) {
  Harness h(fast_server(2));
  auto a = make_client(h.io, fast_client(h.port()));
  auto b = make_client(h.io, fast_client(h.port()));
  a.client->join(facts("a", 1, 0));
  b.client->join(facts("b", 1, 1));
  ASSERT_TRUE(run_until(h.io, [&] { return !a.log->assignments.empty() && !b.log->assignments.empty(); }));
  b.client->send(Message{"worker_status", Generation{0}, {{"line", "rank=3 phase\\init\nfailed"}}});
  h.server->send(0, Message{"only_a", Generation{0}, {{"k", "v"}}});
  ASSERT_TRUE(run_until(h.io, [&] { return !h.messages.empty() && !a.log->messages.empty(); }));
  EXPECT_EQ(h.messages[0].first, 1);
  EXPECT_EQ(h.messages[0].second.type, "worker_status");
  EXPECT_EQ(h.messages[0].second.fields.at("line"), "rank=3 phase\\init\nfailed");
  EXPECT_EQ(a.log->messages[0].type, "only_a");
  run_for(h.io, 100ms);
  EXPECT_TRUE(b.log->messages.empty());  // send() went to node 0 only
  EXPECT_GT(a.client->rtt_ms(), 0.0);
}

// A tokenless job's master answers queries only to whoever proves its own query token (its
// launcher's user, through the job record); a query that proves nothing is refused, and a
// node still joins without a token.
TEST(RendezvousJoin, ATokenlessJobsMasterAnswersOnlyQueriesThatProveItsQueryToken) {
  auto o = fast_server(1);
  o.query_token = "own-query-token";
  Harness h(o);
  std::atomic<bool> stop{false};
  std::thread loop([&] {
    for (int i = 0; i < 1000 && !stop; ++i) run_for(h.io, 5ms);
  });
  QueryFailure owner, stranger, wrong;
  const std::string answered = query_status("127.0.0.1", h.port(), "job-a", "own-query-token", 2000ms, owner);
  const std::string refused = query_master("127.0.0.1", h.port(), "job-a", "", "debug poll 0", 2000ms, stranger);
  query_status("127.0.0.1", h.port(), "job-a", "guess", 2000ms, wrong);
  stop = true;
  loop.join();
  EXPECT_FALSE(owner.failed()) << owner.text;
  EXPECT_EQ(answered, "2 of 2 nodes running\nline two");
  EXPECT_EQ(stranger.kind, QueryFailure::Kind::Refused) << stranger.text;
  EXPECT_EQ(refused, "");
  EXPECT_TRUE(contains(stranger.text, "answers only those who prove its token")) << stranger.text;
  EXPECT_EQ(wrong.kind, QueryFailure::Kind::Refused) << wrong.text;
  TestClient node = make_client(h.io, fast_client(h.port()));  // the join needs no token
  node.client->join(facts("a", 1));
  EXPECT_TRUE(run_until(h.io, [&] { return !node.log->assignments.empty(); }));
}

TEST(RendezvousJoin, QueryStatusReturnsStatusText) {
  auto o = fast_server(2);
  o.token = "tok";
  Harness h(o);
  std::atomic<bool> stop{false};
  std::thread loop([&] {
    for (int i = 0; i < 1000 && !stop; ++i) run_for(h.io, 5ms);
  });
  QueryFailure failure, failure_bad;
  std::string text = query_status("127.0.0.1", h.port(), "job-a", "tok", 2000ms, failure);
  std::string text_bad = query_status("127.0.0.1", h.port(), "job-a", "nope", 2000ms, failure_bad);
  const std::string &error = failure.text, &error_bad = failure_bad.text;
  EXPECT_FALSE(failure.failed());
  EXPECT_EQ(failure_bad.kind, QueryFailure::Kind::Refused);
  stop = true;
  loop.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(text, "2 of 2 nodes running\nline two");
  EXPECT_EQ(text_bad, "");
  EXPECT_TRUE(contains(error_bad, "authentication failed")) << error_bad;
  EXPECT_EQ(h.server->joined_count(), 0);  // a status query is not a join
}

// A port nothing listens on (the job has ended): the failure says so by its kind, which
// `ddplaunch status --watch` and `ddplaunch tail` take as the job's end.
TEST(RendezvousJoin, AQueryToAPortNothingListensOnIsNothingListens) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor closed(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto port = closed.local_endpoint().port();
  closed.close();
  QueryFailure failure;
  EXPECT_EQ(query_status("127.0.0.1", port, "job-a", "tok", 2000ms, failure), "");
  EXPECT_EQ(failure.kind, QueryFailure::Kind::NothingListens) << failure.text;
  EXPECT_TRUE(contains(failure.text, "cannot connect to the master at 127.0.0.1:" + std::to_string(port))) << failure.text;
}
