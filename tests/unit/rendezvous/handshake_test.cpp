// The rendezvous handshake's trust on 127.0.0.1 / ::1: the greeting and early refusals say
// nothing about the job; captured joins cannot be replayed or altered; frames after the
// handshake cannot be altered, injected, replayed or reordered; nodes (and status
// queries) refuse a master that cannot prove the token; peers without a node rank cannot
// speak for the job; the server listens where it is told, IPv6 and dual-stack included.
#include "../../../rendezvous/src/frame_seal.h"
#include "../../../rendezvous/src/wire.h"
#include "rendezvous/fake_rendezvous_master.h"
#include "rendezvous/raw_peer.h"
#include "rendezvous/rendezvous_test_support.h"
#include "ddplaunch/rendezvous/token_proof.h"

using namespace rdzv_test;
namespace detail = ddplaunch::rendezvous::detail;

namespace {

struct ServerLog {
  std::vector<std::string> refused;
  std::vector<std::pair<int, Message>> messages;
  int plans = 0;
  ServerCallbacks callbacks() {
    ServerCallbacks cb;
    cb.plan = [this](Generation, const std::vector<NodeRecord>&) { ++plans; return test_plan(); };
    cb.on_refused = [this](const std::string& peer, const std::string& why) { refused.push_back(peer + ": " + why); };
    cb.on_message = [this](int rank, const Message& m) { messages.emplace_back(rank, m); };
    return cb;
  }
};

// Waits (bounded) for the index-th frame from the server.
std::optional<Frame> await_frame(boost::asio::io_context& io, RawPeer& peer, std::size_t index) {
  run_until(io, [&] {
    peer.poll();
    return peer.nth_frame(index).has_value() || peer.closed_by_server;
  });
  return peer.nth_frame(index);
}

// A join as a real node would send it for `hello`, signed with `token` ("" = unsigned).
Frame signed_join(const Frame& hello, const std::string& token, const std::string& job, int requested_rank,
                  const std::string& node_nonce) {
  Frame join;
  join.kind = "join";
  join.job_id = job;
  detail::put_facts(join.fields, "f.", facts("raw", 1, requested_rank));
  join.fields["protocol"] = std::to_string(kProtocolVersion);
  join.fields["nonce"] = node_nonce;
  if (!token.empty())
    join.fields["proof"] = node_proof(token, hello.fields.at("nonce"), node_nonce, detail::claims_of(join));
  return join;
}

// A server with token "tok" on 127.0.0.1 and a raw peer that got its greeting.
struct GreetedPeer {
  std::unique_ptr<Server> server;
  std::unique_ptr<RawPeer> peer;
  std::optional<Frame> hello;
  GreetedPeer(boost::asio::io_context& io, ServerOptions o, ServerLog& log) {
    o.token = "tok";
    server = std::make_unique<Server>(io, o, log.callbacks());
    EXPECT_EQ(server->listen("127.0.0.1", 0), "");
    peer = std::make_unique<RawPeer>(server->port());
    hello = await_frame(io, *peer, 0);
  }
};

Frame forged_assignment() {
  Frame assign;
  assign.kind = "assign";
  Assignment a;
  a.node_count = 2;
  a.world_size = 2;
  a.node_rank = 1;
  a.rank_offset = 1;
  a.worker_master_addr = "203.0.113.66";  // where an impostor would send the workers
  a.worker_master_port = 29500;
  detail::put_assignment(assign, a);
  return assign;
}

bool ipv6_loopback_available() {
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

TEST(RendezvousHandshake, GreetingCarriesOnlyTheChallengeAndWireVersion) {
  boost::asio::io_context io;
  ServerLog log;
  auto o = fast_server(2, "secret-job-name");
  o.launcher_version = "9.9.9";
  GreetedPeer greeted(io, o, log);
  RawPeer& peer = *greeted.peer;
  auto& hello = greeted.hello;
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->kind, "hello");
  EXPECT_EQ(hello->job_id, "");
  EXPECT_EQ(hello->generation, Generation{0});
  ASSERT_EQ(hello->fields.size(), 2u);
  EXPECT_EQ(hello->fields.at("protocol"), std::to_string(kProtocolVersion));
  EXPECT_EQ(hello->fields.at("nonce").size(), kNonceHexChars);
  EXPECT_EQ(peer.received.find("secret-job-name"), std::string::npos);
  EXPECT_EQ(peer.received.find("9.9.9"), std::string::npos);
}

TEST(RendezvousHandshake, RefusalsBeforeProofNeverNameTheMastersJob) {
  boost::asio::io_context io;
  ServerLog log;
  Server server(io, fast_server(2, "secret-job-name"), log.callbacks());  // no token: job id compared
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  RawPeer peer(server.port());
  auto hello = await_frame(io, peer, 0);
  ASSERT_TRUE(hello);
  peer.send_bytes(encode_frame(signed_join(*hello, "", "guessed-job", -1, random_nonce())));
  auto refusal = await_frame(io, peer, 1);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->kind, "refuse");
  EXPECT_EQ(refusal->job_id, "");
  EXPECT_TRUE(contains(refusal->fields.at("reason"), "differs from the master's")) << refusal->fields.at("reason");
  EXPECT_EQ(peer.received.find("secret-job-name"), std::string::npos) << peer.received;

  // With a token, a wrong proof is refused before the job id is even looked at.
  auto o = fast_server(2, "secret-job-name");
  o.token = "tok";
  Server with_token(io, o, log.callbacks());
  ASSERT_EQ(with_token.listen("127.0.0.1", 0), "");
  auto co = fast_client(with_token.port(), "secret-job-name");
  co.token = "wrong";
  auto client = make_client(io, co);
  client.client->join(facts("n"));
  ASSERT_TRUE(run_until(io, [&] { return !client.log->refusals.empty(); }));
  EXPECT_TRUE(contains(client.log->refusals[0], "authentication failed")) << client.log->refusals[0];
  EXPECT_EQ(with_token.joined_count(), 0);
}

TEST(RendezvousHandshake, CapturedJoinReplayedOrAlteredIsRefused) {
  boost::asio::io_context io;
  ServerLog log;
  GreetedPeer greeted(io, fast_server(3), log);
  Server& server = *greeted.server;
  RawPeer& genuine = *greeted.peer;
  auto& hello = greeted.hello;
  ASSERT_TRUE(hello);
  std::string node_nonce = random_nonce();
  Frame join = signed_join(*hello, "tok", "job-a", -1, node_nonce);
  std::string captured = encode_frame(join);
  genuine.send_bytes(captured);
  auto welcome = await_frame(io, genuine, 1);
  ASSERT_TRUE(welcome);
  EXPECT_EQ(welcome->kind, "welcome");
  EXPECT_TRUE(equal_constant_time(welcome->fields.at("proof"),
                                  master_proof("tok", node_nonce, hello->fields.at("nonce"), detail::claims_of(join))));
  ASSERT_TRUE(run_until(io, [&] { return server.joined_count() == 1; }));

  // The same bytes on a new connection answer a challenge that is no longer asked.
  RawPeer replay(server.port());
  ASSERT_TRUE(await_frame(io, replay, 0));
  replay.send_bytes(captured);
  auto replay_answer = await_frame(io, replay, 1);
  ASSERT_TRUE(replay_answer);
  EXPECT_EQ(replay_answer->kind, "refuse");
  EXPECT_TRUE(contains(replay_answer->fields.at("reason"), "authentication failed"));

  // A join proven for this challenge, then changed on the way (asks for rank 0 instead).
  RawPeer altered(server.port());
  auto hello3 = await_frame(io, altered, 0);
  ASSERT_TRUE(hello3);
  Frame changed = signed_join(*hello3, "tok", "job-a", -1, random_nonce());
  detail::put_facts(changed.fields, "f.", facts("raw", 1, 0));
  changed.fields["proof"] = signed_join(*hello3, "tok", "job-a", -1, changed.fields.at("nonce")).fields.at("proof");
  altered.send_bytes(encode_frame(changed));
  auto altered_answer = await_frame(io, altered, 1);
  ASSERT_TRUE(altered_answer);
  EXPECT_EQ(altered_answer->kind, "refuse");
  EXPECT_TRUE(contains(altered_answer->fields.at("reason"), "authentication failed"));
  EXPECT_EQ(server.joined_count(), 1);
}

// A connection seals each frame where it encoded it, at the end of its write queue: the MAC
// covers that frame's body only, the same as sealing the body on its own.
TEST(RendezvousHandshake, SealingTheTailOfAQueueSealsThatFrameAlone) {
  SessionKeys keys = session_keys("tok", random_nonce(), random_nonce(), "claims");
  detail::FrameSeal alone = detail::master_seal(keys), in_queue = detail::master_seal(keys);
  const std::string body = "hb\njob\n0\n\nseq=1\n", queued_before = "earlier frames";
  std::string sealed = body, queue = queued_before + body;
  alone.seal(sealed);
  in_queue.seal_tail(queue, queued_before.size());
  EXPECT_EQ(queue, queued_before + sealed);
  std::string error;
  EXPECT_TRUE(detail::node_seal(keys).open(queue.substr(queued_before.size()), error)) << error;
}

TEST(RendezvousHandshake, SealedFramesOpenOnlyOnceInOrderAndUnaltered) {
  SessionKeys keys = session_keys("tok", random_nonce(), random_nonce(), "claims");
  detail::FrameSeal master = detail::master_seal(keys), node = detail::node_seal(keys);
  std::string first = "msg\njob\n0\njob_end\nexit_code=1\n", second = "hb\njob\n0\n\nseq=1\n";
  std::string sealed_first = first, sealed_second = second;
  master.seal(sealed_first);
  master.seal(sealed_second);
  std::string error;
  detail::FrameSeal reordered = detail::node_seal(keys);
  EXPECT_FALSE(reordered.open(sealed_second, error)) << "the second frame opened first";
  EXPECT_TRUE(contains(error, "fails its MAC")) << error;

  std::string altered = sealed_first;
  altered.replace(altered.find("exit_code=1"), 11, "exit_code=0");
  EXPECT_FALSE(node.open(altered, error));
  EXPECT_FALSE(node.open(first, error)) << "a frame without a MAC";
  EXPECT_TRUE(contains(error, "carries no MAC")) << error;
  auto opened = node.open(sealed_first, error);
  ASSERT_TRUE(opened) << error;
  EXPECT_EQ(*opened, first);
  EXPECT_FALSE(node.open(sealed_first, error)) << "the same frame replayed";
  opened = node.open(sealed_second, error);
  ASSERT_TRUE(opened) << error;
  EXPECT_EQ(*opened, second);

  std::string reflected = first;  // a node's own frame sent back to it is not the master's
  detail::node_seal(keys).seal(reflected);
  EXPECT_FALSE(detail::node_seal(keys).open(reflected, error));
  std::string other_session = first;  // nor is a frame of another connection of the same job
  detail::master_seal(session_keys("tok", random_nonce(), random_nonce(), "claims")).seal(other_session);
  EXPECT_FALSE(detail::node_seal(keys).open(other_session, error));
}

// A job larger than the keep-alive budget (here 1 heartbeat a second for 2 places: every 2 s)
// is paced so from its start: a joining node is told the pace at once, in a sealed heartbeat
// right after the welcome that asks for no answer, so it sends no heartbeats while others join.
TEST(RendezvousHandshake, AJobPacedSlowerThanConfiguredTellsAJoiningNodeThePaceSealedAfterTheWelcome) {
  boost::asio::io_context io;
  ServerLog log;
  auto options = fast_server(2);
  options.keepalive_budget_per_s = 1;
  GreetedPeer greeted(io, options, log);
  RawPeer& peer = *greeted.peer;
  ASSERT_TRUE(greeted.hello);
  Frame join = signed_join(*greeted.hello, "tok", "job-a", -1, random_nonce());
  peer.send_bytes(encode_frame(join));
  ASSERT_TRUE(await_frame(io, peer, 2));
  detail::FrameSeal seal = detail::node_seal(
      session_keys("tok", greeted.hello->fields.at("nonce"), join.fields.at("nonce"), detail::claims_of(join)));
  FrameReader reader(1 << 20);
  reader.append(peer.received.data(), peer.received.size());
  std::string_view body;
  std::string error;
  ASSERT_EQ(reader.next_body(body, error), FrameReader::Status::kFrame);  // the greeting
  ASSERT_EQ(reader.next_body(body, error), FrameReader::Status::kFrame);  // the welcome
  ASSERT_EQ(reader.next_body(body, error), FrameReader::Status::kFrame);
  auto opened = seal.open(body, error);
  ASSERT_TRUE(opened) << error;
  auto pace = decode_body(*opened, error);
  ASSERT_TRUE(pace) << error;
  EXPECT_EQ(pace->kind, "hb");
  EXPECT_EQ(pace->fields["pace_ms"], "2000");
  EXPECT_EQ(pace->fields.count("echo"), 0u) << "asks for no answer: nothing comes back while others join";
}

TEST(RendezvousHandshake, MasterRefusesAFrameAfterTheHandshakeWithoutTheSessionMac) {
  boost::asio::io_context io;
  ServerLog log;
  GreetedPeer greeted(io, fast_server(2), log);
  RawPeer& peer = *greeted.peer;
  ASSERT_TRUE(greeted.hello);
  Frame join = signed_join(*greeted.hello, "tok", "job-a", 1, random_nonce());
  peer.send_bytes(encode_frame(join));
  ASSERT_TRUE(await_frame(io, peer, 1));  // the welcome
  ASSERT_TRUE(run_until(io, [&] { return greeted.server->joined_count() == 1; }));
  detail::FrameSeal seal = detail::node_seal(
      session_keys("tok", greeted.hello->fields.at("nonce"), join.fields.at("nonce"), detail::claims_of(join)));

  Frame hb;
  hb.kind = "hb";
  hb.job_id = "job-a";
  hb.fields["seq"] = "7";
  hb.fields["echo"] = "1";  // a heartbeat that asks for its answer
  std::string body = encode_body(hb);
  seal.seal(body);
  peer.send_bytes(length_prefixed(body));  // sealed right: answered, and the answer is sealed too
  // Every frame after the welcome is sealed; the server's own join-progress frame may come
  // before the answer on a busy machine, so the answer is looked for among the next few.
  std::string error, seen;
  bool acked = false;
  for (std::size_t index = 2; index < 6 && !acked; ++index) {
    ASSERT_TRUE(await_frame(io, peer, index)) << "frames so far:\n" << seen;
    std::string received = peer.received;
    FrameReader reader(1 << 20);
    reader.append(received.data(), received.size());
    std::string_view answer;
    for (std::size_t i = 0; i <= index; ++i) ASSERT_EQ(reader.next_body(answer, error), FrameReader::Status::kFrame);
    auto opened = seal.open(answer, error);
    ASSERT_TRUE(opened) << error;
    seen += std::string(*opened) + "\n--\n";
    acked = contains(std::string(*opened), "hb_ack\njob-a\n");
  }
  EXPECT_TRUE(acked) << seen;

  hb.fields["seq"] = "8";
  peer.send_bytes(encode_frame(hb));  // what a relay injects: a well-formed frame without the MAC
  ASSERT_TRUE(run_until(io, [&] {
    for (auto& r : log.refused)
      if (contains(r, "refused a frame from 127.0.0.1:")) return true;
    return false;
  }));
  EXPECT_EQ(greeted.server->joined_count(), 0);
}

TEST(RendezvousHandshake, NodeRefusesAMasterThatCannotProveTheToken) {
  struct Case {
    const char* what;
    FakeRendezvousMaster::Answer answer;
  };
  std::vector<Case> cases = {
      {"wrong proof", [](const Frame&, const std::string&) {
         Frame w;
         w.kind = "welcome";
         w.fields["proof"] = std::string(64, '0');
         return std::vector<Frame>{w, forged_assignment()};
       }},
      {"no welcome at all", [](const Frame&, const std::string&) { return std::vector<Frame>{forged_assignment()}; }},
      {"the node's own proof reflected", [](const Frame& join, const std::string&) {
         Frame w;
         w.kind = "welcome";
         w.fields["proof"] = join.fields.count("proof") ? join.fields.at("proof") : "";
         return std::vector<Frame>{w, forged_assignment()};
       }},
  };
  // Refused like a closed port: reported once, connected to again after a pause that grows
  // (not once per round trip), never obeyed, and named by the join timeout's error.
  for (auto& c : cases) {
    SCOPED_TRACE(c.what);
    boost::asio::io_context io;
    FakeRendezvousMaster fake(c.answer, /*every_connection=*/true);
    auto co = fast_client(fake.port());
    co.token = "tok";
    co.join_timeout = 3500ms;
    co.impostor_retry_first = 500ms;
    co.impostor_retry_most = 1000ms;
    auto client = make_client(io, co);
    client.client->join(facts("n"));
    ASSERT_TRUE(run_until(io, [&] { return !client.log->losses.empty() || !client.log->assignments.empty(); },
                          10000ms));
    EXPECT_TRUE(client.log->assignments.empty());
    ASSERT_EQ(client.log->impostors.size(), 1u);
    EXPECT_TRUE(contains(client.log->impostors[0], "could not prove the rendezvous token")) << client.log->impostors[0];
    EXPECT_TRUE(contains(client.log->impostors[0], "127.0.0.1:" + std::to_string(fake.port())))
        << client.log->impostors[0];
    // 3.5 s with pauses of 0.5, 1, 1, 1 s: four or five connections (without the pause: hundreds).
    EXPECT_GE(fake.connections(), 3);
    EXPECT_LE(fake.connections(), 6);
    ASSERT_EQ(client.log->losses.size(), 1u);
    EXPECT_TRUE(contains(client.log->losses[0], "could not prove the rendezvous token")) << client.log->losses[0];
  }
}

// A master needs no proof without a token, so what it assigns is checked field by field: a
// deadline that is not a finite number of seconds above 0, an address that is neither a host
// name nor an IP literal, or ids with control characters are a malformed assignment, never
// the workers' environment.
TEST(RendezvousHandshake, AnAssignmentWithAbsurdFieldsIsRefusedAsMalformed) {
  struct Case {
    const char* what;
    const char* field;
    std::string value;
  };
  const Case cases[] = {
      {"nan deadline", "timeout_s", "nan"},
      {"negative deadline", "timeout_s", "-5"},
      {"zero deadline", "timeout_s", "0"},
      {"escape sequences in the address", "master_addr", "10.0.0.1\x1b[2J"},
      {"a command in the address", "master_addr", "$(reboot)"},
      {"escape in the run id", "run_id", "run\x1b]0;x\x07"},
      {"a run nonce that is not hex", "run_nonce", "zz"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    boost::asio::io_context io;
    const std::string field = c.field, value = c.value;
    FakeRendezvousMaster fake([field, value](const Frame& request, const std::string&) {
      Frame welcome;
      welcome.kind = "welcome";
      welcome.job_id = request.job_id;
      Frame assign;
      assign.kind = "assign";
      assign.job_id = request.job_id;
      assign.fields = {{"node_rank", "0"}, {"node_count", "1"},   {"rank_offset", "0"}, {"world_size", "1"},
                       {"master_addr", "10.0.0.1"}, {"master_port", "29500"}, {"timeout_s", "60"}, {"run_id", "r"}};
      assign.fields[field] = value;
      return std::vector<Frame>{welcome, assign};
    });
    auto client = make_client(io, fast_client(fake.port()));
    client.client->join(facts("n"));
    ASSERT_TRUE(run_until(io, [&] { return !client.log->losses.empty() || !client.log->assignments.empty(); }));
    EXPECT_TRUE(client.log->assignments.empty());
    ASSERT_FALSE(client.log->losses.empty());
    EXPECT_TRUE(contains(client.log->losses[0], "malformed assignment")) << client.log->losses[0];
  }
}

// A squatter held the port first; once the real master has it, the node joins it.
TEST(RendezvousHandshake, NodeJoinsTheRealMasterAfterAnImpostorLeftThePort) {
  boost::asio::io_context io;
  FakeRendezvousMaster fake(
      [](const Frame&, const std::string&) {
        Frame w;
        w.kind = "welcome";
        w.fields["proof"] = std::string(64, '0');
        return std::vector<Frame>{w, forged_assignment()};
      },
      /*every_connection=*/true);
  const std::uint16_t port = fake.port();
  auto co = fast_client(port);
  co.token = "tok";
  co.impostor_retry_first = 300ms;
  co.impostor_retry_most = 300ms;
  auto client = make_client(io, co);
  client.client->join(facts("n"));
  ASSERT_TRUE(run_until(io, [&] { return fake.connections() >= 2; }));
  fake.close();
  // The node closes its end of the squatter's last connection (else that connection holds the
  // port, as a real master's bind retries ride out).
  run_for(io, 200ms);
  ServerLog log;
  auto so = fast_server(1);
  so.token = "tok";
  Server server(io, so, log.callbacks());
  ASSERT_EQ(server.listen("127.0.0.1", port), "");
  ASSERT_TRUE(run_until(io, [&] { return !client.log->assignments.empty() || !client.log->losses.empty(); }));
  ASSERT_EQ(client.log->assignments.size(), 1u) << (client.log->losses.empty() ? "" : client.log->losses[0]);
  EXPECT_NE(client.log->assignments[0].worker_master_addr, "203.0.113.66");
  // Said once per reason, not once per connection: the unproven welcome, and (when the
  // squatter left while a connection waited for its proof) that it closed without proving.
  ASSERT_FALSE(client.log->impostors.empty());
  EXPECT_LE(client.log->impostors.size(), 2u);
  for (const auto& said : client.log->impostors)
    EXPECT_TRUE(contains(said, "127.0.0.1:" + std::to_string(port))) << said;
}

TEST(RendezvousHandshake, StatusQueryRefusesAMasterThatCannotProveTheToken) {
  FakeRendezvousMaster fake([](const Frame&, const std::string&) {
    Frame w;
    w.kind = "welcome";
    w.fields["proof"] = std::string(64, '0');
    Frame reply;
    reply.kind = "status_reply";
    reply.fields["text"] = "forged: all is well";
    return std::vector<Frame>{w, reply};
  });
  QueryFailure failure;
  std::string text = query_status("127.0.0.1", fake.port(), "job-a", "tok", 3000ms, failure);
  const std::string& error = failure.text;
  EXPECT_EQ(failure.kind, QueryFailure::Kind::UnprovenMaster);
  EXPECT_EQ(text, "");
  EXPECT_TRUE(contains(error, "could not prove the rendezvous token")) << error;
}

TEST(RendezvousHandshake, PeerWithoutANodeRankCannotSpeakForTheJob) {
  boost::asio::io_context io;
  ServerLog log;
  Server server(io, fast_server(2), log.callbacks());  // no token: anyone may join
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  RawPeer peer(server.port());
  auto hello = await_frame(io, peer, 0);
  ASSERT_TRUE(hello);
  peer.send_bytes(encode_frame(signed_join(*hello, "", "job-a", -1, random_nonce())));
  ASSERT_TRUE(run_until(io, [&] { return server.joined_count() == 1; }));
  Frame problem;
  problem.kind = "msg";
  problem.job_id = "job-a";
  problem.subtype = "node_problem";
  problem.fields = {{"exit_code", "0"}, {"message", "all done"}};
  peer.send_bytes(encode_frame(problem));
  ASSERT_TRUE(run_until(io, [&] {
    for (auto& r : log.refused)
      if (contains(r, "no node rank yet")) return true;
    return false;
  }));
  EXPECT_TRUE(log.messages.empty());  // never reached the launcher as node -1
}

TEST(RendezvousHandshake, ListensOnTheGivenAddressesOnlyAndDualStackOnWildcard) {
  if (!ipv6_loopback_available()) GTEST_SKIP() << "no IPv6 loopback (::1) on this machine";
  boost::asio::io_context io;
  ServerLog log;
  {
    Server server(io, fast_server(2), log.callbacks());
    ASSERT_EQ(server.listen(std::vector<std::string>{"127.0.0.1", "::1"}, 0), "");
    EXPECT_EQ(server.listening_on(), (std::vector<std::string>{"127.0.0.1", "::1"}));
    RawPeer v4(server.port(), "127.0.0.1"), v6(server.port(), "::1"), other(server.port(), "127.0.0.2");
    EXPECT_TRUE(v4.connected && v6.connected);
    EXPECT_FALSE(other.connected);  // 127.0.0.2 is this machine too, but not what was asked
    EXPECT_TRUE(await_frame(io, v4, 0));
    EXPECT_TRUE(await_frame(io, v6, 0));
  }
  Server wildcard(io, fast_server(2), log.callbacks());
  ASSERT_EQ(wildcard.listen("::", 0), "");
  RawPeer v4(wildcard.port(), "127.0.0.1"), v6(wildcard.port(), "::1");
  EXPECT_TRUE(v6.connected);
  EXPECT_TRUE(v4.connected) << "'::' should take IPv4 too (dual-stack) where net.ipv6.bindv6only is 0";
  EXPECT_TRUE(await_frame(io, v6, 0));
  // A node joining over IPv4 is seen at its IPv4 address, not as ::ffff:127.0.0.1.
  auto client = make_client(io, fast_client(wildcard.port()));
  client.client->join(facts("dual"));
  ASSERT_TRUE(run_until(io, [&] { return wildcard.joined_count() == 1; }));
  EXPECT_EQ(wildcard.joined_nodes().at(0).observed_address, "127.0.0.1");
}

TEST(RendezvousHandshake, NodeJoinsAMasterOnIpv6Loopback) {
  if (!ipv6_loopback_available()) GTEST_SKIP() << "no IPv6 loopback (::1) on this machine";
  boost::asio::io_context io;
  ServerLog log;
  auto o = fast_server(2);
  o.token = "tok";
  Server server(io, o, log.callbacks());
  ASSERT_EQ(server.listen("::1", 0), "");
  std::vector<TestClient> clients;
  for (int i = 0; i < 2; ++i) {
    auto co = fast_client(server.port());
    co.host = "::1";
    co.token = "tok";
    clients.push_back(make_client(io, co));
    clients.back().client->join(facts("v6-" + std::to_string(i)));
  }
  ASSERT_TRUE(run_until(io, [&] { return !clients[0].log->assignments.empty() && !clients[1].log->assignments.empty(); }));
  EXPECT_EQ(log.plans, 1);
  EXPECT_EQ(server.joined_nodes().at(0).observed_address, "::1");
}

// A one-launcher job's own node proves itself with the in-memory secret its server was given
// (ServerOptions::own_node_secret) instead of a token HMAC: it joins and is assigned, and the
// frames after its welcome go unsealed. Anyone else claiming to be the own node — a wrong
// secret, an empty one, or any claim to a server that has no secret — is refused, and a join
// without the claim still has to prove the token.
TEST(RendezvousHandshake, OnlyTheLaunchersOwnNodeJoinsWithItsSecret) {
  const std::string secret = random_nonce();
  auto claim = [](const Frame& hello, const std::string& claimed) {
    Frame join = signed_join(hello, "", "job-a", -1, random_nonce());
    join.fields["own"] = claimed;
    return join;
  };
  {
    boost::asio::io_context io;
    ServerLog log;
    ServerOptions o = fast_server(1);
    o.own_node_secret = secret;
    GreetedPeer greeted(io, o, log);
    ASSERT_TRUE(greeted.hello);
    for (const std::string& wrong : {std::string(64, '0'), std::string()}) {
      RawPeer impostor(greeted.server->port());
      auto hello = await_frame(io, impostor, 0);
      ASSERT_TRUE(hello);
      impostor.send_bytes(encode_frame(claim(*hello, wrong)));
      auto answer = await_frame(io, impostor, 1);
      ASSERT_TRUE(answer);
      EXPECT_EQ(answer->kind, "refuse");
      EXPECT_TRUE(contains(answer->fields.at("reason"), "authentication failed")) << answer->fields.at("reason");
    }
    greeted.peer->send_bytes(encode_frame(signed_join(*greeted.hello, "", "job-a", -1, random_nonce())));
    auto unproven = await_frame(io, *greeted.peer, 1);
    ASSERT_TRUE(unproven);
    EXPECT_EQ(unproven->kind, "refuse") << "without the claim, the token is still required";
    EXPECT_EQ(greeted.server->joined_count(), 0);

    auto own = fast_client(greeted.server->port());
    own.token = "tok";
    own.own_node_secret = secret;
    auto client = make_client(io, own);
    client.client->join(facts("own"));
    ASSERT_TRUE(run_until(io, [&] { return !client.log->assignments.empty() || !client.log->refusals.empty(); }));
    EXPECT_TRUE(client.log->refusals.empty()) << client.log->refusals[0];
    ASSERT_EQ(client.log->assignments.size(), 1u);
    Message ping;
    ping.type = "ping";
    greeted.server->send(0, ping);
    ASSERT_TRUE(run_until(io, [&] { return !client.log->messages.empty(); })) << "unsealed frames reach the own node";
    EXPECT_EQ(client.log->messages[0].type, "ping");
  }
  {
    boost::asio::io_context io;
    ServerLog log;
    GreetedPeer greeted(io, fast_server(1), log);  // no own-node secret
    ASSERT_TRUE(greeted.hello);
    greeted.peer->send_bytes(encode_frame(claim(*greeted.hello, secret)));
    auto answer = await_frame(io, *greeted.peer, 1);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->kind, "refuse");
    EXPECT_EQ(greeted.server->joined_count(), 0);
  }
}
